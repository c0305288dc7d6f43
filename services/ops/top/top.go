// Package top is `wololo top`: the whole deployment in the terminal, from
// the gateway's Cluster service (services/ops/clusterview), redrawn every
// interval until Ctrl-C (an interruption like any other: exit status
// 130); with --json, one snapshot for scripts.
//
// It presents the operator credential and only reads; Render, the text of
// one snapshot, is pure.
package top

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"

	"github.com/wololo/wololo/internal/lifetime"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/certs"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
	"github.com/wololo/wololo/services/ops/clusterview"
	"github.com/wololo/wololo/services/wire/rpc"
)

const usage = `usage: wololo top [--server ADDR] [--json] [flags]

Draws the whole deployment, as the gateway sees it, and redraws it every
--interval until Ctrl-C: per task its instances, health, rows/s, outbox
depth, lag and restarts; the streams between tasks with their rates; the
masters (who leads, term, acting); each job's progress and ETA. It asks
the gateway's Cluster service on its public port, as the operator
credential (--name, default "operator", of --tls-dir).

--json prints one snapshot as JSON (with rates: it waits one --interval
when the gateway had no snapshot to compare with) and exits.
`

// Run is `wololo top`.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo top", usage, stderr)
	server := new(string)
	cli.StringEnv(fs, server, "server", client.EnvServer, client.DefaultServer, "the gateway's public address")
	asJSON := fs.Bool("json", false, "print one snapshot as JSON and exit")
	interval := fs.Duration("interval", time.Second, "time between two snapshots")
	timeout := fs.Duration("connect-timeout", 10*time.Second, "give up when the gateway does not answer for this long")
	tlsFlags := tlsflags.Register(fs, client.DefaultTLSDir)
	fs.StringVar(&tlsFlags.Name, "name", certs.OperatorName, "operator credential to present: --tls-dir/NAME.pem and NAME.key")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *interval <= 0 {
		return fmt.Errorf("%w: --interval must be positive", cli.ErrUsage)
	}
	tlsConfig, err := tlsFlags.GatewayTLS(*server)
	if err != nil {
		return err
	}
	conn, err := rpc.NewClient(*server, tlsConfig)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", *server, err)
	}
	defer conn.Close()
	cluster := wololov1.NewClusterClient(conn)
	get := func() (*wololov1.ClusterGetResponse, error) {
		cctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		// Waits for the gateway (a cluster starting, a gateway restarting)
		// up to the timeout instead of failing at the first refusal.
		r, err := cluster.Get(cctx, &wololov1.ClusterGetRequest{}, grpc.WaitForReady(true))
		if err != nil {
			return nil, fmt.Errorf("Cluster/Get at %s: %w", *server, err)
		}
		return r, nil
	}
	if *asJSON {
		snap, err := get()
		if err == nil && snap.GetIntervalSeconds() == 0 {
			if err := lifetime.Sleep(ctx, *interval); err != nil {
				return err
			}
			snap, err = get()
		}
		if err != nil {
			return err
		}
		b, err := clusterview.JSON(snap)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	terminal := client.IsTerminal(stdout)
	for {
		snap, err := get()
		if err != nil {
			return err
		}
		if terminal {
			fmt.Fprint(stdout, "\x1b[H\x1b[2J") // home, clear
		}
		Render(stdout, *server, snap)
		if !terminal {
			fmt.Fprintln(stdout)
		}
		if err := lifetime.Sleep(ctx, *interval); err != nil {
			// Ctrl-C is how top ends, and it is still an interruption:
			// main exits 130, as for any command (cli.ExitCodes).
			return err
		}
	}
}

// Render writes one snapshot as text: the stages, the streams, the
// masters, the jobs, and the processes that are not serving.
func Render(w io.Writer, server string, s *wololov1.ClusterGetResponse) {
	rates := "rates from the next snapshot on"
	if s.GetIntervalSeconds() > 0 {
		rates = fmt.Sprintf("rates over %.1fs", s.GetIntervalSeconds())
	}
	fmt.Fprintf(w, "wololo top  %s  %s  (%s)\n\n", server, s.GetTaken().AsTime().Local().Format("15:04:05"), rates)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "STAGE\tINSTANCES\tSTATE\tROWS IN/S\tROWS OUT/S\tOUTBOX\tMAX LAG\tBACKPRESSURE\tRESTARTS\t")
	for _, st := range s.GetStages() {
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%s\t%d\t%d\t%.0f%%\t%d\t\n", st.GetName(), st.GetServing(), st.GetInstances(), st.GetHealth(),
			human(st.GetRowsInPerSecond()), human(st.GetRowsOutPerSecond()), st.GetOutboxDepth(), st.GetMaxLagBatches(), 100*st.GetBackpressure(), st.GetRestarts())
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "STREAM\tFROM → TO\tROWS/S\tBYTES/S\tROWS\tOUTBOX\tMAX LAG\t")
	for _, st := range s.GetStreams() {
		fmt.Fprintf(tw, "%s\t%s → %s\t%s\t%s\t%d\t%d\t%d\t\n", shortName(st.GetName()), st.GetFrom(), st.GetTo(),
			human(st.GetRowsPerSecond()), human(st.GetBytesPerSecond()), st.GetRows(), st.GetOutboxDepth(), st.GetMaxLagBatches())
	}
	tw.Flush()
	if len(s.GetMasters()) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "MASTER\tROLE\tTERM\tLEADER\tACTING\tRESTARTS DONE")
		for _, m := range s.GetMasters() {
			if !m.GetReachable() {
				fmt.Fprintf(tw, "%s\tunreachable\t\t\t\t\n", m.GetInstance())
				continue
			}
			leader := "-"
			if m.GetLeader() != 0 {
				leader = fmt.Sprintf("master-%d", m.GetLeader())
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\n", m.GetInstance(), m.GetElectionRole(), m.GetTerm(), leader, yesNo(m.GetActing()), m.GetRestartsDone())
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	if len(s.GetJobs()) == 0 {
		fmt.Fprintln(w, "no jobs")
	} else {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "JOB\tCLIENT\tQUERIES\tSTATE\tPROGRESS\tELAPSED\tETA\tFINISHED BY")
		for _, j := range s.GetJobs() {
			eta := "-"
			if j.GetEtaSeconds() >= 0 {
				eta = (time.Duration(j.GetEtaSeconds()*10) * time.Second / 10).String()
			}
			fmt.Fprintf(tw, "%s (%s)\t%s\t%s\t%s\t%s %5.1f%%\t%s\t%s\t%d processes\n", j.GetName(), j.GetJobId(), j.GetClient(), clusterview.QueriesLabel(j.GetQueries()), j.GetState(),
				bar(j.GetProgress(), 20), 100*j.GetProgress(), (time.Duration(j.GetElapsedSeconds()*10) * time.Second / 10).String(), eta, j.GetInstancesFinished())
		}
		tw.Flush()
	}
	var down []string
	for _, p := range s.GetProcesses() {
		if p.GetState() != clusterview.Serving {
			line := p.GetInstance() + ": " + p.GetState()
			if p.GetError() != "" {
				line += " (" + p.GetError() + ")"
			}
			down = append(down, line)
		}
	}
	sort.Strings(down)
	if len(down) > 0 {
		fmt.Fprintf(w, "\nnot serving:\n  %s\n", strings.Join(down, "\n  "))
	}
	if fenced := fencedLines(s.GetProcesses()); len(fenced) > 0 {
		fmt.Fprintf(w, "\nfenced (refused as older than an incarnation claimed of them):\n  %s\n", strings.Join(fenced, "\n  "))
	}
}

// fencedLines says, per process, which senders it refuses as older than
// the newest incarnation it has seen of them (Status.fenced): a zombie,
// or a real instance fenced by a claim above its incarnation, which is
// stuck until its clock passes the claim.
func fencedLines(processes []*wololov1.ClusterProcess) []string {
	var out []string
	for _, p := range processes {
		for _, f := range p.GetStatus().GetFenced() {
			out = append(out, fmt.Sprintf("%s refuses %s: incarnation %d, %d newer claimed; %d refusals in %s", p.GetInstance(), f.GetInstance(),
				f.GetRefusedIncarnation(), f.GetNewestIncarnation()-f.GetRefusedIncarnation(), f.GetRefusals(), (time.Duration(f.GetSeconds())*time.Second).String()))
		}
	}
	sort.Strings(out)
	return out
}

// nameWidth is the most characters of a stream's name the table shows.
// A job of queries' streams are at most 40 bytes (sqlops.ChannelStream);
// a process of an older build, or a topology's own, may name longer ones.
const nameWidth = 40

// shortName is name cut to nameWidth characters, the cut marked "…".
func shortName(name string) string {
	if r := []rune(name); len(r) > nameWidth {
		return string(r[:nameWidth-1]) + "…"
	}
	return name
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// bar is a progress bar of width cells.
func bar(frac float64, width int) string {
	n := int(min(max(frac, 0), 1)*float64(width) + 0.5)
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

// human formats a rate: 950, 12.3k, 4.5M.
func human(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
