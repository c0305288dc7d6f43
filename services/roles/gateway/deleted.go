package gateway

import (
	"encoding/json"
	"fmt"

	"github.com/wololo/wololo/transport"
)

// The jobs deleted on purpose (deleteJob: cancelled by their client,
// deleted by the operator), remembered by name across restarts, so that
// a client asking after one, even of a gateway restarted since, hears
// that it was deleted and why (ErrDeleted), not that there is no such
// job: an attached `wololo client submit` takes "no such job" for a lost
// job and submits it again.
//
// They are records of the store the gateway commits its jobs to. A
// deleted job's own records go with its tombstone (DropJob deletes
// everything of it, here and at every process), so the deletions are kept
// under a name of their own, DeletionsJob, that the gateway never gives a
// job (jobid.New makes neither '_' nor '-'), rather than in a store
// interface of their own: the store keeps records by job, atomically and
// durably, which is all they need. Recover takes them out of the image,
// so that the stage runtime, which shares the store, never takes them for
// a job it was not introduced to (and reaps them), and the Committer
// restores no channel of them.
//
// The records are a ring of maxDeletedNames slots (deletionKey): the
// n'th deletion ever is written into slot n mod maxDeletedNames, over the
// oldest one, in one commit of one small record, so that a deletion costs
// the same however many are remembered and the oldest is forgotten first.
// A name used again by a new job frees its slot (an empty record) before
// the new job is stored: else a restart would say the new job's name was
// deleted once the new job is gone for another reason (retention).

// DeletionsJob is the name the remembered deletions are kept under in the
// gateway's store: the records of no job (a test of what the store holds
// tells them apart by it).
const DeletionsJob = "_gateway-deletions"

// deletionKey is the record of ring slot i.
func deletionKey(i int) string { return fmt.Sprintf("deleted/%04d", i) }

// deletionRecord is one slot's record, in JSON: a small record that only
// the gateway reads (as recordFailed is plain text), needing no message
// of the wire's protobuf.
type deletionRecord struct {
	Seq   uint64 `json:"seq"` // the how-manieth deletion ever, from 0
	Owner string `json:"owner"`
	Name  string `json:"name"`
	Why   string `json:"why"`
}

// deletion is why a name's job was deleted, and its place in the ring.
type deletion struct {
	why string
	seq uint64
}

// deletions are the remembered deletions: by name, and which name each
// ring slot holds; next is the sequence number of the next one.
type deletions struct {
	byName map[ownedName]deletion
	slots  []ownedName // maxDeletedNames of them once one is remembered
	next   uint64
}

// slot is the ring slot of deletion number seq.
func slot(seq uint64) int { return int(seq % maxDeletedNames) }

// why is why the name's job was deleted on purpose, if it is remembered.
func (d *deletions) why(k ownedName) (string, bool) {
	del, ok := d.byName[k]
	return del.why, ok
}

// put remembers deletion number seq of name k in memory, forgetting the
// deletion its slot held.
func (d *deletions) put(k ownedName, why string, seq uint64) {
	if d.byName == nil {
		d.byName = map[ownedName]deletion{}
		d.slots = make([]ownedName, maxDeletedNames)
	}
	i := slot(seq)
	if old, ok := d.byName[d.slots[i]]; ok && slot(old.seq) == i {
		delete(d.byName, d.slots[i])
	}
	if old, ok := d.byName[k]; ok && old.seq > seq {
		return // recovering an older deletion of a name deleted again since
	}
	d.slots[i] = k
	d.byName[k] = deletion{why: why, seq: seq}
	d.next = max(d.next, seq+1)
}

// forget forgets the name's deletion in memory.
func (d *deletions) forget(k ownedName) { delete(d.byName, k) }

// rememberDeletion durably remembers that the name's job was deleted on
// purpose, why; js.mu is held. It is written before the job's tombstone:
// a gateway stopped in between still holds the job, whose name then
// wins over its deletion.
func (js *jobs) rememberDeletion(k ownedName, why string) error {
	seq := js.deleted.next
	b, err := json.Marshal(deletionRecord{Seq: seq, Owner: k.owner, Name: k.name, Why: why})
	if err != nil {
		return fmt.Errorf("encode the deletion of job %q: %w", k.name, err)
	}
	if err := js.store.Commit(&transport.Commit{Job: DeletionsJob, Records: map[string][]byte{deletionKey(slot(seq)): b}}); err != nil {
		return errorf(ErrStore, "remember the deletion of job %q: %v", k.name, err)
	}
	js.deleted.put(k, why, seq)
	return nil
}

// forgetDeletion durably forgets the name's deletion, if one is
// remembered, before a new job takes the name; js.mu is held.
func (js *jobs) forgetDeletion(k ownedName) error {
	del, ok := js.deleted.byName[k]
	if !ok {
		return nil
	}
	if err := js.store.Commit(&transport.Commit{Job: DeletionsJob, Records: map[string][]byte{deletionKey(slot(del.seq)): {}}}); err != nil {
		return errorf(ErrStore, "forget the deletion of job %q: %v", k.name, err)
	}
	js.deleted.forget(k)
	return nil
}

// recoverDeletions reads the remembered deletions of a store image, and
// takes their records out of it (they are no job's); js.mu is held. An
// unreadable slot is logged and left to be written over.
func (js *jobs) recoverDeletions(img *transport.Image) {
	ji := img.Jobs[DeletionsJob]
	delete(img.Jobs, DeletionsJob)
	if ji == nil {
		return
	}
	for i := range maxDeletedNames {
		raw := ji.Records[deletionKey(i)]
		if len(raw) == 0 {
			continue
		}
		var rec deletionRecord
		if err := json.Unmarshal(raw, &rec); err != nil || slot(rec.Seq) != i {
			js.log.Error("unreadable record of a deleted job; its deletion is forgotten", "slot", i, "error", err)
			continue
		}
		js.deleted.put(ownedName{rec.Owner, rec.Name}, rec.Why, rec.Seq)
	}
}
