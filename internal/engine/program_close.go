package engine

// Close releases the program's compiled graphs; the program must not run
// afterwards.
func (p *Program) Close() {
	if p.exec != nil {
		p.exec.Finalize()
		p.exec = nil
	}
}
