package docs

import (
	"go/ast"
	"go/printer"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// TestAliasDocsShowFields checks that volt.Gradient, an alias of an internal
// engine type whose fields godoc cannot show, lists in its doc comment
// exactly the fields the engine's type has, with their types.
func TestAliasDocsShowFields(t *testing.T) {
	tests := []struct{ alias, engineDir, engineType string }{
		{"Gradient", "internal/engine", "Gradient"},
	}
	for _, tc := range tests {
		t.Run(tc.alias, func(t *testing.T) {
			aliasDoc := ""
			for _, typ := range parsePackage(t, "").Types {
				if typ.Name == tc.alias {
					aliasDoc = typ.Doc
				}
			}
			if aliasDoc == "" {
				t.Fatalf("volt.%s: no type with a doc comment", tc.alias)
			}
			want := structFields(t, tc.engineDir, tc.engineType)
			if len(want) == 0 {
				t.Fatalf("%s.%s: no struct fields found", tc.engineDir, tc.engineType)
			}
			got := map[string]string{}
			for _, m := range docField.FindAllStringSubmatch(aliasDoc, -1) {
				got[m[1]] = m[2]
			}
			for name, typ := range want {
				if got[name] != typ {
					t.Errorf("volt.%s's doc shows field %s as %q; %s.%s has %s %s", tc.alias, name, got[name], tc.engineDir, tc.engineType, name, typ)
				}
			}
			for name := range got {
				if _, ok := want[name]; !ok {
					t.Errorf("volt.%s's doc shows field %s, which %s.%s does not have", tc.alias, name, tc.engineDir, tc.engineType)
				}
			}
		})
	}
}

// docField matches a field line of a struct written in a doc comment's code
// block: its name and type.
var docField = regexp.MustCompile(`(?m)^\t\t([A-Z][A-Za-z0-9_]*)\s+(\S+)`)

// structFields returns the exported fields of the struct type name in the
// package in dir, with their types as written.
func structFields(t *testing.T, dir, name string) map[string]string {
	t.Helper()
	fields := map[string]string{}
	for _, typ := range parsePackage(t, dir).Types {
		if typ.Name != name {
			continue
		}
		for _, spec := range typ.Decl.Specs {
			st, ok := spec.(*ast.TypeSpec).Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, f := range st.Fields.List {
				var b strings.Builder
				if err := printer.Fprint(&b, token.NewFileSet(), f.Type); err != nil {
					t.Fatal(err)
				}
				for _, n := range f.Names {
					if n.IsExported() {
						fields[n.Name] = b.String()
					}
				}
			}
		}
	}
	return fields
}
