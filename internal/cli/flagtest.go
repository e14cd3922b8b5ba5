package cli

import "github.com/spf13/pflag"

// ParseFlags registers flags with register on a new flag set and parses
// args as a command line would: for the tests of the packages that bind
// their settings to flags (RegisterFlags).
func ParseFlags(register func(*pflag.FlagSet), args ...string) (*pflag.FlagSet, error) {
	fs := pflag.NewFlagSet("flags", pflag.ContinueOnError)
	register(fs)
	return fs, fs.Parse(args)
}

// Unnamed are the flags of fs that names, a field-to-flag table (a
// package's FlagOf), has no entry for: an error about the field one of
// them sets would name the field, not the flag.
func Unnamed(fs *pflag.FlagSet, names map[string]string) []string {
	named := map[string]bool{}
	for _, flag := range names {
		named[flag] = true
	}
	var missing []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !named["--"+f.Name] && (f.Shorthand == "" || !named["-"+f.Shorthand]) {
			missing = append(missing, "--"+f.Name)
		}
	})
	return missing
}
