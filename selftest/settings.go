package selftest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"runtime/pprof"

	"github.com/llmreplay/llmreplay/internal/atomicfile"
	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/outfile"
	"github.com/llmreplay/llmreplay/replay"
)

func settingErr(field, format string, args ...any) error {
	return fielderr.Newf("selftest: Config", field, format, args...)
}

// Check refuses settings the harness cannot run with, before ten minutes
// of measuring: given says which were stated, since a stated 0 Repeats is
// not the default it would mean here, nor is a stated empty Timestamps.
func (c Config) Check(given fielderr.Given) error {
	switch c.Timestamps {
	case replay.TimestampsAuto, replay.TimestampsKernel, replay.TimestampsUser:
	case "": // auto, unless stated empty
		if given.Has("Timestamps") {
			return settingErr("Timestamps", "{Timestamps} %q: use kernel, user or auto", c.Timestamps)
		}
	default:
		return settingErr("Timestamps", "{Timestamps} %q: use kernel, user or auto", c.Timestamps)
	}
	if c.Repeats < 0 || (c.Repeats == 0 && given.Has("Repeats")) {
		return settingErr("Repeats", "{Repeats} %d: give 1 or more runs, or leave {Repeats} out for the default (3; 1 with --short)", c.Repeats)
	}
	if c.FloorWakeups < 0 {
		return settingErr("FloorWakeups", "{FloorWakeups} %d: give 1 or more wake-ups (0 means the default)", c.FloorWakeups)
	}
	for _, s := range c.Sections {
		if s < 1 || s > 6 {
			return settingErr("Sections", "{Sections} %d: sections are numbered 1 to 6", s)
		}
	}
	return nil
}

// Outputs are the files a run writes besides the table it prints: the
// table again (Table) and a CPU profile of the client (CPUProfile).
type Outputs struct {
	Table, CPUProfile string
	Force             bool // replace existing files
}

// Files are Outputs claimed for a run: held from the check until the run
// renames its files over them, so a second run started meanwhile with the
// same names is refused instead of having its files replaced at the end.
// The profile is written to a temporary file beside it and renamed into
// place only when the run ends well: a failed or stopped run leaves no
// half profile.
type Files struct {
	o       Outputs
	prof    *atomicfile.File
	release []func()
}

// Claim checks and claims o's files before the run starts.
func (o Outputs) Claim() (*Files, error) {
	f := &Files{o: o}
	if o.Table != "" {
		if err := outfile.Check(o.Table, o.Force); err != nil {
			return nil, settingErr("Table", "%v", err)
		}
		if err := f.hold("Table", o.Table); err != nil {
			return nil, err
		}
	}
	if o.CPUProfile == "" {
		return f, nil
	}
	fail := func(err error) (*Files, error) { f.Close(); return nil, err }
	if o.CPUProfile == o.Table {
		return fail(settingErr("CPUProfile", "{CPUProfile} %s: it is also the {Table} file; give the profile another name", o.CPUProfile))
	}
	if err := outfile.Check(o.CPUProfile, o.Force); err != nil {
		return fail(settingErr("CPUProfile", "{CPUProfile}: %v", err))
	}
	if err := f.hold("CPUProfile", o.CPUProfile); err != nil {
		return fail(err)
	}
	p, err := atomicfile.Create(o.CPUProfile)
	if err != nil {
		return fail(settingErr("CPUProfile", "{CPUProfile}: %v", err))
	}
	f.prof = p
	return f, nil
}

// hold claims path (outfile.Hold); another run that took it since the
// check is the same bad input as a file there before.
func (f *Files) hold(field, path string) error {
	release, err := outfile.Hold(path)
	if errors.Is(err, fs.ErrExist) {
		return settingErr(field, "{"+field+"} %s: the file exists (another run has just claimed it); choose another name, or add {Force} to replace it", path)
	} else if err != nil {
		return settingErr(field, "{"+field+"} %s: %v", path, err)
	}
	f.release = append(f.release, release)
	return nil
}

// Close gives up what the run did not write.
func (f *Files) Close() {
	if f.prof != nil {
		f.prof.Abort()
	}
	for _, r := range f.release {
		r()
	}
}

// Run runs the harness with cfg, profiling this process (the client: the
// simulator is the child) when asked, and writes the table to w and to
// the table file.
func (f *Files) Run(ctx context.Context, cfg Config, w io.Writer) error {
	if f.prof != nil {
		if err := pprof.StartCPUProfile(f.prof); err != nil {
			return err
		}
	}
	res, err := Run(ctx, cfg)
	if f.prof != nil {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return err
	}
	if f.prof != nil {
		if err := f.prof.Commit(); err != nil {
			return err
		}
	}
	if err := res.WriteTable(w); err != nil {
		return err
	}
	if f.o.Table == "" {
		return nil
	}
	var b bytes.Buffer
	res.WriteTable(&b)
	return atomicfile.WriteFile(f.o.Table, b.Bytes())
}
