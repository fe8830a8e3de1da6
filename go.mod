module ttd

go 1.26.8

require (
	github.com/klauspost/compress v1.20.3 // indirect
	golang.org/x/arch v0.32.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
