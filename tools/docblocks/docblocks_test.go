package docblocks

import (
	"errors"
	"reflect"
	"testing"
)

const sample = "# Title\n" +
	"\n" +
	"Text with a [link](docs/a.md#b-c) and `[not](a/link)`.\n" +
	"\n" +
	"```sh\n" +
	"make demo   # builds it\n" +
	"\n" +
	"# a comment line\n" +
	"bin/wololo local &   # \"cluster up\" when ready\n" +
	"echo 'a # kept' \\\n" +
	"  --more\n" +
	"```\n" +
	"\n" +
	"## The `top` command, and [more](x.md)\n" +
	"\n" +
	"```console\n" +
	"$ TLS=\"-cacert ca.pem\"\n" +
	"$ grpcurl $TLS \\\n" +
	"    host:1 list\n" +
	"a.Service\n" +
	"b.Service\n" +
	"\n" +
	"$ grpcurl host:2 x/Y\n" +
	"ERROR:\n" +
	"  Code: NotFound\n" +
	"```\n" +
	"\n" +
	"## Title\n" +
	"\n" +
	"```\n" +
	"# not a heading [nor](a link)\n" +
	"```\n" +
	"```sh\n" +
	"```\n"

func TestShell(t *testing.T) {
	want := [][]Command{
		{
			{Line: 6, Text: "make demo", Comment: "builds it"},
			{Line: 9, Text: "bin/wololo local &", Comment: `"cluster up" when ready`},
			{Line: 10, Text: "echo 'a # kept' --more"},
		},
		{},
	}
	if got := Shell(sample); !reflect.DeepEqual(got, want) {
		t.Errorf("Shell:\n got %#v\nwant %#v", got, want)
	}
}

func TestConsole(t *testing.T) {
	want := []Session{
		{Line: 17, Command: `TLS="-cacert ca.pem"`},
		{Line: 18, Command: "grpcurl $TLS host:1 list", Output: "a.Service\nb.Service\n\n"},
		{Line: 23, Command: "grpcurl host:2 x/Y", Output: "ERROR:\n  Code: NotFound\n"},
	}
	if got := Console(sample); !reflect.DeepEqual(got, want) {
		t.Errorf("Console:\n got %#v\nwant %#v", got, want)
	}
	if !IsAssignment(want[0].Command) || IsAssignment(want[1].Command) {
		t.Error("IsAssignment")
	}
}

func TestFences(t *testing.T) {
	langs, lines := Fences(sample)
	if want := []string{"sh", "console", "", "sh"}; !reflect.DeepEqual(langs, want) || !reflect.DeepEqual(lines, []int{5, 16, 30, 33}) {
		t.Errorf("Fences: %q at %v", langs, lines)
	}
}

func TestLinksAndHeadings(t *testing.T) {
	if got, want := Links(sample), []Link{{3, "docs/a.md#b-c"}, {14, "x.md"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Links: %v, want %v", got, want)
	}
	if got, want := HeadingIDs(sample), []string{"title", "the-top-command-and-more", "title-1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("HeadingIDs: %q, want %q", got, want)
	}
	for target, rel := range map[string]bool{"docs/a.md": true, "#x": true, "https://x.org/a": false, "mailto:a@b": false} {
		if IsRelative(target) != rel {
			t.Errorf("IsRelative(%q) = %v", target, !rel)
		}
	}
	if got := HeadingIDs("## Masters: who restarts what?\n### Exit statuses (`wololo`)\n"); !reflect.DeepEqual(got, []string{"masters-who-restarts-what", "exit-statuses-wololo"}) {
		t.Errorf("HeadingIDs: %q", got)
	}
}

func TestCheck(t *testing.T) {
	fail := errors.New("exit status 1")
	for _, c := range []struct {
		name  string
		shown string
		got   string
		err   error
		ok    bool
	}{
		{"the error shown", "ERROR:\n  Code: NotFound\n  Message: x", "ERROR:\n  Code: NotFound\n  Message: no job", fail, true},
		{"another error", "ERROR:\n  Code: NotFound", "ERROR:\n  Code: Unauthenticated", fail, false},
		{"success where an error is shown", "ERROR:\n  Code: NotFound", "{}", nil, false},
		{"a failure", "a.Service", "", fail, false},
		{"the same list", "a.Service\nb.Service\n", "a.Service\nb.Service\n", nil, true},
		{"another list", "a.Service\nb.Service", "a.Service", nil, false},
		{"the role and instance shown", "{\n  \"role\": \"master\",\n  \"instance\": \"master-1\",\n  ...\n}", `{"role": "master", "instance": "master-1", "uptimeSeconds": 3}`, nil, true},
		{"another instance", "{\n  \"role\": \"master\",\n  \"instance\": \"master-1\"\n}", `{"role": "master", "instance": "master-2"}`, nil, false},
		{"not JSON", "{\n  \"role\": \"task\"\n}", "role: task", nil, false},
		{"nothing shown", "", "whatever", nil, true},
	} {
		if err := Check(c.shown, []byte(c.got), c.err); (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok %v", c.name, err, c.ok)
		}
	}
}
