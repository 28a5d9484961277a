module github.com/voltml/volt/internal/onnxcheck/gorgonnxrun

go 1.27

require (
	github.com/owulveryck/onnx-go v0.5.0
	gorgonia.org/tensor v0.9.3
)

require (
	github.com/awalterschulze/gographviz v0.0.0-20190522210029-fa59802746ab // indirect
	github.com/chewxy/hm v1.0.0 // indirect
	github.com/chewxy/math32 v1.0.4 // indirect
	github.com/gogo/protobuf v1.3.0 // indirect
	github.com/golang/protobuf v1.3.2 // indirect
	github.com/google/flatbuffers v1.11.0 // indirect
	github.com/leesper/go_rng v0.0.0-20190531154944-a612b043e353 // indirect
	github.com/pkg/errors v0.8.1 // indirect
	github.com/xtgo/set v1.0.0 // indirect
	gonum.org/v1/gonum v0.0.0-20190902003836-43865b531bee // indirect
	gorgonia.org/cu v0.9.0-beta // indirect
	gorgonia.org/dawson v1.1.0 // indirect
	gorgonia.org/gorgonia v0.9.4 // indirect
	gorgonia.org/vecf32 v0.9.0 // indirect
	gorgonia.org/vecf64 v0.9.0 // indirect
)
