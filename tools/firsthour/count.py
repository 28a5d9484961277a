"""Counts the lines and imports of examples/firsthour/main.go and of its
Lightning twin, tools/firsthour/lightning_firsthour.py, the way issue 24
counts them: a line counts unless it is blank or a comment only (Go's //,
Python's # and the module docstring); an import is one imported package
(the standard library included).

    /usr/bin/python3 tools/firsthour/count.py
"""
import ast
import os
import re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def go_counts(path):
    src = open(path).read()
    lines = [l for l in src.split("\n") if l.strip() and not l.strip().startswith("//")]
    block = re.search(r"^import \((.*?)^\)", src, re.S | re.M)
    imports = [l for l in block.group(1).split("\n") if l.strip().strip('"')] if block else []
    return len(lines), len(imports)


def py_counts(path):
    src = open(path).read()
    tree = ast.parse(src)
    doc = tree.body[0]
    skip = set()
    if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str):
        skip = set(range(doc.lineno, doc.end_lineno + 1))
    lines = [l for i, l in enumerate(src.split("\n"), 1)
             if i not in skip and l.strip() and not l.strip().startswith("#")]
    imports = sum(1 for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
    return len(lines), imports


if __name__ == "__main__":
    g = go_counts(os.path.join(ROOT, "examples", "firsthour", "main.go"))
    p = py_counts(os.path.join(ROOT, "tools", "firsthour", "lightning_firsthour.py"))
    print(f"volt: {g[0]} lines, {g[1]} imports; Lightning 2.2.5: {p[0]} lines, {p[1]} imports")
