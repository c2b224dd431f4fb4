package views

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render"
)

// whois --stdin: keys read a line at a time and answered as a stream.

// StreamWhois answers keys from r on w (in p's format, with its
// generation) line by line without holding them; the
// json and jsonl fast path appends each answer's bytes directly. It
// returns how many keys were answered.
func StreamWhois(w io.Writer, p *render.Printer, wh *inspect.Whois, r io.Reader) (int, error) {
	out := render.NewStream(w, p.Format, WhoisHeaders(wh, wh.WhatIfMode()), wh.Scenario).WithGeneration(p)
	err := ReadKeys(r, func(key []byte) error {
		appendJSON := func(dst []byte) []byte {
			b := wh.AppendJSON(dst, key)
			return b[:len(b)-1] // without its newline
		}
		if f := out.Format(); f == render.JSON || f == render.JSONL {
			return out.Item(appendJSON, nil, nil)
		}
		r := wh.Resolve(string(key))
		return out.Item(nil, r, func() []string { return WhoisRow(r) })
	})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return out.Count(), err
}

// StreamWhoisLive reads keys from r and has answer answer them chunk at a
// time, so millions of keys never sit in memory at once; answered names
// the brokers answering. It returns how many keys were answered.
func StreamWhoisLive(w io.Writer, p *render.Printer, wh *inspect.Whois, r io.Reader, answered []string, chunkSize int, answer func(keys []string) ([]WhoisLiveResult, error)) (int, error) {
	out := render.NewStream(w, p.Format, WhoisLiveHeaders(wh),
		fmt.Sprintf("%s; live: brokers answering %s", wh.Scenario, OrNone(strings.Join(answered, ",")))).WithGeneration(p)
	// Keys go to the brokers in chunks: one batched FindCoordinator each.
	flush := func(keys []string) error {
		if len(keys) == 0 {
			return nil
		}
		rs, err := answer(keys)
		if err != nil {
			return err
		}
		for _, r := range rs {
			var jerr error
			appendJSON := func(dst []byte) []byte {
				// render's JSON: the same form as every command (no HTML
				// escaping, [] for nil, keyBase64 for a key that is not UTF-8).
				var b bytes.Buffer
				jerr = render.WriteJSON(&b, r, false)
				return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
			}
			if err := out.Item(appendJSON, r, func() []string { return WhoisLiveRow(r) }); err != nil {
				return err
			}
			if jerr != nil {
				return jerr
			}
		}
		return nil
	}
	chunk := make([]string, 0, chunkSize)
	err := ReadKeys(r, func(key []byte) error {
		chunk = append(chunk, string(key))
		if len(chunk) < chunkSize {
			return nil
		}
		err := flush(chunk)
		chunk = chunk[:0]
		return err
	})
	if err == nil {
		err = flush(chunk)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return out.Count(), err
}

// ReadKeys calls fn with each non-blank line of r (CR LF trimmed), without
// holding more than one line; a line longer than the buffer is collected
// whole. fn's slice is only valid during the call.
func ReadKeys(r io.Reader, fn func(key []byte) error) error {
	br := bufio.NewReaderSize(r, 256<<10)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if key := bytes.TrimRight(line, "\r\n"); len(key) > 0 {
			if ferr := fn(key); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading keys from standard input: %w", err)
		}
	}
}
