module ttd

go 1.26.8

require (
	github.com/go-delve/delve v1.27.2
	github.com/google/go-dap v0.12.0
	github.com/klauspost/compress v1.20.3
	golang.org/x/arch v0.32.0
	golang.org/x/sys v0.49.0
)

require golang.org/x/telemetry v0.0.0-20241106142447-58a1122356f5 // indirect
