package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Documents the structured readers reject fall back to the text readers
// (see the package documentation, "Documents"):
//   - a YAML document that is not YAML after all, or whose objects match
//     no document format — markdown that starts with front matter
//     ("---" / "sidebar_position: 3" / "---", every Docusaurus, Hugo or
//     Jekyll page), a recipe whose console output sits in a block scalar
//     ("guide: |") — is read again, line by line, as console output;
//     when that finds nothing, its string values are searched as a JSON
//     document's are (quoted strings with "\n" escapes);
//   - a JSON document whose objects match no format is searched for
//     string values that hold several lines, and each is read as console
//     output (a block never spans two strings); documents larger than
//     maxStringsDoc are not searched.
//
// When the text readers find nothing either, the structured readers'
// error is the one reported.

// errNotYAML is the cause of the error for input the YAML decoder
// refuses.
var errNotYAML = errors.New("not YAML")

// autoTextParsers returns the parsers auto mode runs over console output:
// one per text format, but formats another parser covers (TextFormat.Covers).
func autoTextParsers(file string) []LineParser {
	covered := map[string]bool{}
	for _, f := range textFormats {
		for _, c := range f.Covers {
			covered[c] = true
		}
	}
	var out []LineParser
	for _, f := range textFormats {
		switch {
		case covered[f.Name]:
		case f.Auto != nil:
			out = append(out, f.Auto(file))
		default:
			p := f.New(file)
			if fb, ok := p.(fallbackParser); ok {
				fb.holdsForFallback()
			}
			out = append(out, p)
		}
	}
	return out
}

// rejected reports whether err is the structured readers' refusal of a
// whole document rather than a fault found in a document they read.
func rejected(err error) bool {
	return errors.Is(err, ErrUnrecognized) || errors.Is(err, errNotYAML)
}

// fallBack lets the text readers read a document the structured readers
// rejected (r.err). It reports whether it took the document over; r.err
// is then its outcome (nil while text is still to be read).
func (r *Reader) fallBack(data []byte) bool {
	if r.forced() != "" || !rejected(r.err) {
		return false
	}
	r.docErr, r.err = r.err, nil
	r.queue = r.queue[:0]
	switch r.family {
	case "yaml":
		r.docData = data
		r.family = "text"
		r.done = false
		r.br = bufio.NewReaderSize(bytes.NewReader(data), 1<<16)
		r.parsers = autoTextParsers(r.file)
		r.lineNo = 0
		for _, f := range textFormats {
			r.tried = append(r.tried, f.Name)
		}
		return true
	case "json":
		if err := r.readStrings(data); err != nil {
			r.err = err
		} else if len(r.queue) == 0 {
			r.err = r.docErr
		}
		return true
	}
	r.err = r.docErr
	return false
}

// textFallbackEnd is called when the text readers found nothing in a
// YAML document the structured readers rejected: its quoted string
// values ("guide": "...\n...") are searched as a JSON document's are. It
// returns the error to report.
func (r *Reader) textFallbackEnd() error {
	data := r.docData
	r.docData = nil
	if err := r.readStrings(data); err != nil {
		return err
	}
	if len(r.queue) == 0 {
		return r.docErr
	}
	return nil
}

// readStrings reads every string value of a JSON document that holds
// several lines as console output. The document is decoded again as YAML
// (JSON is YAML), which keeps the line of every value; lines within one
// JSON string all have its line.
func (r *Reader) readStrings(data []byte) error {
	if len(data) > maxStringsDoc {
		return nil // per-request records and the like, not a document
	}
	dec := yaml.NewDecoder(bytes.NewReader(LooseJSON(data)))
	for {
		var node yaml.Node
		if err := dec.Decode(&node); err != nil {
			return nil // io.EOF, or JSON YAML does not read: nothing more to find
		}
		if err := r.walkStrings(&node, 0); err != nil {
			return err
		}
	}
}

// maxStringDepth bounds the nesting readStrings walks.
const maxStringDepth = 64

// maxStringsDoc bounds the JSON documents whose strings are searched:
// decoding again with line numbers takes several times the size in
// memory, and a recipe or a page is kilobytes, while what matches no
// format at hundreds of megabytes is per-request records.
const maxStringsDoc = 16 << 20

func (r *Reader) walkStrings(n *yaml.Node, depth int) error {
	if depth > maxStringDepth {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		if n.Tag == "!!str" && strings.IndexByte(n.Value, '\n') >= 0 {
			return r.readString(n)
		}
		return nil
	}
	for _, c := range n.Content {
		if err := r.walkStrings(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// readString runs fresh text parsers over the lines of one string value.
func (r *Reader) readString(n *yaml.Node) error {
	parsers := autoTextParsers(r.file)
	line := n.Line
	lines := strings.Split(n.Value, "\n")
	for i, s := range lines {
		if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			line = n.Line + 1 + i
		}
		s = cleanLine(s)
		for _, p := range parsers {
			if err := p.Line(line, s, r.emit); err != nil {
				return err
			}
		}
	}
	for _, p := range parsers {
		if err := p.End(line, r.emit); err != nil {
			return err
		}
	}
	return nil
}
