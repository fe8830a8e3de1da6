package fleet

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// Results come back to the program that built the pipeline through a
// file: on a cluster the workers are other machines, so the file must be
// on storage both see (a gs:// URL, a shared directory); on prism a
// local temporary file does.

func init() {
	register.Function1x2(toJSONFn)
}

func toJSONFn(x beam.T) (string, error) {
	b, err := json.Marshal(x)
	return string(b), err
}

// WriteJSON writes col as JSON lines to the file path (a path or a URL
// of a Beam filesystem), one line per element, in no particular order.
func WriteJSON(s beam.Scope, path string, col beam.PCollection) {
	s = s.Scope("fleet.WriteJSON")
	textio.Write(s, path, beam.ParDo(s, toJSONFn, col))
}

// ReadJSON reads back what WriteJSON wrote, after the pipeline ran.
func ReadJSON[T any](ctx context.Context, path string) ([]T, error) {
	var sc *bufio.Scanner
	if hasScheme(path) {
		fs, err := filesystem.New(ctx, path)
		if err != nil {
			return nil, err
		}
		defer fs.Close()
		rc, err := fs.OpenRead(ctx, path)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		sc = bufio.NewScanner(rc)
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		sc = bufio.NewScanner(f)
	}
	sc.Buffer(nil, 1<<30)
	var out []T
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// Quiet silences Beam's and prism's logs (every job's progress at INFO,
// and a failed bundle's error with its whole plan, several times, at
// ERROR) on stderr, so a command's output is its own: the command prints
// the pipeline's error itself, in one line (Cause).
func Quiet() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 4})))
}

// Cause shortens a pipeline's error to what failed: Beam wraps a DoFn's
// error in the job's and the bundle's descriptions (with the plan);
// the last line is the DoFn's own error, which names the recording.
func Cause(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return err.Error()
}
