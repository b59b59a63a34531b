package monitors

import "fmt"

// MassUndeclareError refuses a declaration that would undeclare more than
// half of its source's declared monitors at once, or all of them: far more
// likely a deploy that lost its job registry, or a wrong source name, than
// a real removal. It matches ErrConflict.
type MassUndeclareError struct {
	Source string
	// Undeclaring of Declared monitors the source declares now.
	Undeclaring, Declared int
}

func (e *MassUndeclareError) Error() string {
	what := fmt.Sprintf("%d of the %d monitors source %q declares, more than half", e.Undeclaring, e.Declared, e.Source)
	if e.Undeclaring == e.Declared {
		what = fmt.Sprintf("all of the %d monitors source %q declares", e.Declared, e.Source)
	}
	return fmt.Sprintf("this declaration would undeclare %s; if that is meant, send it again with ?allow_mass_undeclare=true", what)
}

// Unwrap makes the error match ErrConflict.
func (e *MassUndeclareError) Unwrap() error { return ErrConflict }

// CheckMassUndeclare returns a *MassUndeclareError when a declaration of
// source would undeclare undeclaring of the declared monitors it declares
// now, and that is all of them or more than half; nil otherwise.
func CheckMassUndeclare(source string, undeclaring, declared int) error {
	if undeclaring == 0 || (undeclaring < declared && 2*undeclaring <= declared) {
		return nil
	}
	return &MassUndeclareError{Source: source, Undeclaring: undeclaring, Declared: declared}
}
