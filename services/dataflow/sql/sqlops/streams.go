package sqlops

import (
	"fmt"
	"strconv"

	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// The names of a plan's channels on the transport: one stream each.

// ChannelStream is the transport's stream of the channel at index i of
// a plan's Channels, named ch: "c", i and '-' (which make it unique within
// the job: no "c<i>-" is a prefix of another), then as much of the
// channel's name as fits in MaxStreamLen bytes, its bytes other than
// letters, digits, '_', '-' and '+' written as '_' (a stream is part of
// store keys and logs). A channel's name is made of query names and key
// expressions, of any length (a GROUP BY of a long CASE): the stream's is
// bounded, well within transport.MaxNameLen, whatever the query, and reads
// as the channel's beginning where it is shown (logs, `wololo top`, the
// dashboard); the whole name is the plan's (explain), listed there at the
// same index.
//
// Streams were named by the channel's name alone before (issue 38): a job
// of queries running across the upgrade holds its outboxes, watermarks
// and journal under the old names, which the upgraded processes do not
// take, and fails (its receivers refuse the old streams, a final
// refusal), to be submitted again; see the package doc.
func ChannelStream(i int, ch string) string {
	b := make([]byte, 0, MaxStreamLen)
	b = append(b, 'c')
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, '-')
	for j := 0; j < len(ch) && len(b) < MaxStreamLen; j++ {
		c := ch[j]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '+' {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

// MaxStreamLen is the most bytes of a channel's stream name
// (ChannelStream), but for a channel index of more than 35 digits.
const MaxStreamLen = 40

// MetricStreams is what the streams of p's channels are called in
// metrics: "ch" and the channel's index in p.Channels ("ch3"), by stream.
// A channel's stream is named after the channel (ChannelStream), whose
// name is made of the job's query names and key expressions (a query
// "payroll" grouped by "ssn" sends on a stream named after both), which
// are the tenant's and must not be shown to whoever reads /metrics; the
// number means something only beside the plan, which the job's client
// and the operator can see (explain, the dashboard).
func MetricStreams(p *physical.Plan) map[string]string {
	out := make(map[string]string, len(p.Channels))
	for i, c := range p.Channels {
		out[ChannelStream(i, c.Name)] = "ch" + strconv.Itoa(i)
	}
	return out
}

// channelOf is a channel, and how many instances send on it.
type channelOf struct {
	ch      string
	senders int
}

// streams names every channel of p (ChannelStream), both ways. No two
// channels share a stream (each is numbered); a plan where they would (two
// channels of one name) is refused all the same.
type streams struct {
	byStream  map[string]channelOf
	byChannel map[string]string
}

func planStreams(p *physical.Plan) (*streams, error) {
	s := &streams{byStream: map[string]channelOf{}, byChannel: map[string]string{}}
	for i, c := range p.Channels {
		n, err := replicasOf(p, c.From)
		if err != nil {
			return nil, fmt.Errorf("channel %s: %w", c.Name, err)
		}
		name := ChannelStream(i, c.Name)
		if prev, ok := s.byStream[name]; ok {
			return nil, fmt.Errorf("channels %s and %s are both stream %s", prev.ch, c.Name, name)
		}
		if _, ok := s.byChannel[c.Name]; ok {
			return nil, fmt.Errorf("two channels named %s", c.Name)
		}
		s.byStream[name] = channelOf{ch: c.Name, senders: n}
		s.byChannel[c.Name] = name
	}
	return s, nil
}

// edges are the streams of the channels that ops write, each to the
// task the channel goes to.
func edges(p *physical.Plan, s *streams, ops []*physical.Op) ([]stage.Edge, error) {
	var out []stage.Edge
	for _, o := range ops {
		if o.Kind != physical.Exchange {
			continue
		}
		c := p.Channel(o.Channel)
		if c == nil {
			return nil, fmt.Errorf("#%d writes channel %q, which is not there", o.ID, o.Channel)
		}
		n, err := replicasOf(p, c.To)
		if err != nil {
			return nil, err
		}
		out = append(out, stage.Edge{Stream: s.byChannel[c.Name], Stage: c.To, Replicas: n})
	}
	return out, nil
}

// inputsOf are the channels into task, in the plan's order: the inputs
// of its stage.Operator, by index.
// stream is the name of the stream channel ch travels on.
func (s *streams) stream(ch *physical.Channel) (string, error) {
	name, ok := s.byChannel[ch.Name]
	if !ok {
		return "", fmt.Errorf("no channel %q in the job's plan", ch.Name)
	}
	return name, nil
}

func inputsOf(p *physical.Plan, s *streams, task string) []channelOf {
	var out []channelOf
	for _, c := range p.Channels {
		if c.To == task {
			out = append(out, s.byStream[s.byChannel[c.Name]])
		}
	}
	return out
}
