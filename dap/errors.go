package dap

// Error codes of ErrorResponse messages, in one place as delve does; the
// client shows the message, the code identifies the failure in tests and
// logs.
const (
	// Protocol and session state.
	ErrCodeUnsupported   = 1000 // a request the server does not implement
	ErrCodeBadArguments  = 1001 // arguments missing or malformed
	ErrCodeNotLaunched   = 1002 // no recording is open yet
	ErrCodeRunning       = 1003 // the request needs a stopped target
	ErrCodeInternal      = 1004 // a panic in a handler, turned into an error
	ErrCodeLaunch        = 2000 // launch failed: bad trace, recording failed
	ErrCodeRecord        = 2001 // the program could not be recorded
	ErrCodeBreakpoint    = 3000 // a breakpoint could not be set
	ErrCodeStep          = 4000 // a step, continue or goto failed
	ErrCodeStack         = 5000 // stackTrace failed
	ErrCodeVariables     = 5001 // scopes or variables failed
	ErrCodeEvaluate      = 5002 // evaluate failed
	ErrCodeMemory        = 5003 // readMemory failed
	ErrCodeDisassemble   = 5004 // disassemble failed
	ErrCodeGotoTargets   = 5005 // gotoTargets failed
	ErrCodeDataBreakInfo = 5006 // dataBreakpointInfo failed
)
