package transport

import "fmt"

// LoadAll is Load with every job's state log read into JobImage.State
// (ReadState's entries, the caller's to keep): the whole content at
// once, for tests and tools that compare stores. Recovery reads a log with ReadState instead,
// an entry at a time, since a log can outgrow memory.
func LoadAll(s Store) (*Image, error) {
	img, err := s.Load()
	if err != nil {
		return nil, err
	}
	for id, ji := range img.Jobs {
		ji.State = nil
		if err := s.ReadState(id, func(e []byte) error {
			ji.State = append(ji.State, e)
			return nil
		}); err != nil {
			return nil, fmt.Errorf("read state log of job %s: %w", id, err)
		}
	}
	return img, nil
}
