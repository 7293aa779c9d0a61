package elle

import (
	"bytes"

	"github.com/hyperiso/hyperiso/history"
)

// ParseCut reads data as EDN, decoded in the chunks between cuts as
// decodeEDN decodes a large input in parallel (nil: in one run).
func ParseCut(data []byte, name string, opt Options, cuts []int) (*history.History, error) {
	p := newParser(name, opt)
	if err := p.decodeChunks(data, cuts); err != nil {
		return nil, err
	}
	p.syntax = EDN
	return p.build()
}

// ParseGeneral is Parse with every completion read the general way
// (completeFast off).
func ParseGeneral(data []byte, name string, opt Options) (*history.History, error) {
	forceGeneral = true
	defer func() { forceGeneral = false }()
	return Parse(bytes.NewReader(data), name, opt)
}
