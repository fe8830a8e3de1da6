package symbols

import (
	"strings"
	"sync"

	"github.com/ianlancetaylor/demangle"
)

// C++ names: function symbols are mangled (_ZN3geo9manhattanEPKNS_5PointE);
// probes match and print them demangled, as c++filt does, with and
// without the parameter list ("geo::manhattan(geo::Point const*)",
// "geo::manhattan"). Demangling uses github.com/ianlancetaylor/demangle,
// the demangler of Go's own tools (pprof, addr2line).

// Demangled is a C++ symbol's name demangled.
type Demangled struct {
	Full  string // with parameters, as c++filt prints it: "geo::scale(long)", "int twice<int>(int)"
	Short string // without parameters and return type, std::string abbreviated: "geo::scale", "twice<int>", "risky [clone .cold]"
}

// Demangle demangles an Itanium C++ ABI name. ok is false for a name
// that is not one (a C or Go symbol) or does not demangle.
func Demangle(name string) (d Demangled, ok bool) {
	if !strings.HasPrefix(name, "_Z") {
		return d, false
	}
	full, err := demangle.ToString(name, demangle.Verbose)
	if err != nil {
		return d, false
	}
	short, err := demangle.ToString(name, demangle.NoParams)
	if err != nil {
		short = full
	}
	if i := strings.Index(full, " [clone "); i > 0 && !strings.Contains(short, " [clone ") {
		// A part the compiler split off (f.cold, f.constprop.0) must
		// not pass for the function itself.
		short += full[i:]
	}
	return Demangled{Full: full, Short: short}, true
}

// demangledNames demangles the module's C++ function symbols once.
func (img *image) demangledNames() map[string]Demangled {
	img.demangleOnce.Do(func() {
		img.demangled = map[string]Demangled{}
		for name, s := range img.symNames {
			if s.fn {
				if d, ok := Demangle(name); ok {
					img.demangled[name] = d
				}
			}
		}
	})
	return img.demangled
}

// demangleState is embedded in image.
type demangleState struct {
	demangleOnce sync.Once
	demangled    map[string]Demangled
}
