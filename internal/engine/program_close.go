package engine

// Close releases the program's compiled graphs and staging buffers; the
// program must not run afterwards.
func (p *Program) Close() {
	if p.exec != nil {
		p.exec.Finalize()
		p.exec = nil
	}
	for _, s := range p.staging {
		if s != nil {
			_ = s.FinalizeAll()
		}
	}
	p.staging = nil
}
