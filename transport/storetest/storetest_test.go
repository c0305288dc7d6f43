package storetest_test

import (
	"testing"

	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

func TestMemStore(t *testing.T) {
	storetest.Run(t, func(*testing.T, string) transport.Store { return transport.NewMemStore() })
}
