package workload

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strings"
	"time"
)

// Trace log formats that trace:FILE understands.
const (
	TraceMooncake = "mooncake" // JSONL: timestamp, input_length, output_length, hash_ids
	// TraceBailian is a Mooncake-style log whose rows carry Qwen-Bailian's
	// chat_id and parent_chat_id: its chats become sessions.
	TraceBailian  = "qwen-bailian"
	TraceAzure    = "azure"    // CSV: TIMESTAMP, ContextTokens, GeneratedTokens
	TraceBurstGPT = "burstgpt" // CSV: Timestamp, Request tokens, Response tokens
)

const (
	maxTraceRows     = MaxRequests
	defaultBlockSize = 512 // Mooncake's hash block, in tokens
)

// traceRow is one request of a public log.
type traceRow struct {
	t    int64 // ns, in the log's own time base
	in   int
	out  int
	hash []int64
	// chat is the row's chat id in a log with sessions (Qwen-Bailian's
	// chat_id), "" otherwise; parent is the row index (after sorting) of
	// the turn it continues, -1 for a first turn.
	chat   string
	parent string // the chat id this row continues, "" for a first turn
}

// traceLog is a parsed log with what the import had to say about it.
type traceLog struct {
	format    string
	rows      []traceRow
	unit      string // how timestamps were read
	failures  int    // rows skipped as failed requests (BurstGPT)
	blockSize int    // tokens per hash id (0: no hash ids)
	sessions  bool   // rows carry chat ids and parents (Qwen-Bailian)
	orphans   int    // turns whose parent is not in the log, made first turns
}

// traceOptions are the importer's choices a user can make.
type traceOptions struct {
	// orphansStart lets a turn whose parent_chat_id is on no line of the
	// log (one cut from a longer log) start a session; otherwise such a
	// log is refused.
	orphansStart bool
}

// parseTrace reads a request log, telling the format from its first line:
// JSON objects are Mooncake / Qwen-Bailian, CSV headers name the rest.
func parseTrace(r io.Reader) (*traceLog, error) { return parseTraceWith(r, traceOptions{}) }

func parseTraceWith(r io.Reader, opt traceOptions) (*traceLog, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	first, err := br.Peek(1)
	for err == nil && (first[0] == ' ' || first[0] == '\n' || first[0] == '\r' || first[0] == '\t' || first[0] == 0xEF) {
		// skip leading blank space and a UTF-8 byte-order mark
		if first[0] == 0xEF {
			if bom, _ := br.Peek(3); bytes.Equal(bom, []byte{0xEF, 0xBB, 0xBF}) {
				br.Discard(3)
				first, err = br.Peek(1)
				continue
			}
			break
		}
		br.Discard(1)
		first, err = br.Peek(1)
	}
	if err != nil {
		return nil, errors.New("the request log is empty")
	}
	var log *traceLog
	if first[0] == '{' {
		log, err = parseMooncake(br, opt)
	} else {
		log, err = parseCSVTrace(br)
	}
	if err != nil {
		return nil, err
	}
	if len(log.rows) == 0 {
		return nil, fmt.Errorf("the %s request log holds no usable requests", log.format)
	}
	slices.SortStableFunc(log.rows, func(a, b traceRow) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	})
	return log, nil
}

func parseMooncake(br *bufio.Reader, opt traceOptions) (*traceLog, error) {
	type row struct {
		Timestamp    json.Number `json:"timestamp"`
		InputLength  *int        `json:"input_length"`
		OutputLength *int        `json:"output_length"`
		HashIDs      []int64     `json:"hash_ids"`
		// Qwen-Bailian's session fields (importer_sessions.go).
		ChatID    json.RawMessage `json:"chat_id"`
		ParentID  json.RawMessage `json:"parent_chat_id"`
		Turn      json.RawMessage `json:"turn"`
		SessionID json.RawMessage `json:"session_id"`
	}
	log := &traceLog{format: TraceMooncake}
	var stamps []string
	var links []chatLink
	lr := &lineReader{r: br}
	for {
		line, err := lr.next()
		if errors.Is(err, io.ErrUnexpectedEOF) {
			// a last line without a newline is still a line
			line, err = lr.buf, nil
			lr.lines++
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errLineTooLong) {
			return nil, fmt.Errorf("Mooncake log line %d is longer than %d bytes", lr.lines+1, lineLimit)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the Mooncake log: %w", err)
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			var r row
			d := json.NewDecoder(bytes.NewReader(line))
			d.UseNumber()
			if err := d.Decode(&r); err != nil {
				return nil, fmt.Errorf("Mooncake log line %d: %v", lr.lines, err)
			}
			if r.Timestamp == "" || r.InputLength == nil || r.OutputLength == nil {
				return nil, fmt.Errorf("Mooncake log line %d: needs timestamp, input_length and output_length", lr.lines)
			}
			if *r.InputLength < 0 || *r.OutputLength < 0 {
				return nil, fmt.Errorf("Mooncake log line %d: negative length", lr.lines)
			}
			if len(log.rows) >= maxTraceRows {
				return nil, fieldErr("Window", fmt.Sprintf("is needed: the request log has more than %d requests", maxTraceRows), "take a slice of it")
			}
			if len(r.SessionID) > 0 {
				return nil, fmt.Errorf("Mooncake log line %d: session_id rows (a multi-turn Mooncake variant whose input_length counts only a turn's new tokens) are not supported: give whole requests with Qwen-Bailian's chat_id and parent_chat_id", lr.lines)
			}
			link, err := readChatLink(lr.lines, r.ChatID, r.ParentID, r.Turn)
			if err != nil {
				return nil, err
			}
			if len(links) > 0 && link.has != links[0].has {
				return nil, fmt.Errorf("request log line %d: some lines have a chat_id and others not: give every line a chat_id (parent_chat_id -1 on first turns) or none", lr.lines)
			}
			links = append(links, link)
			stamps = append(stamps, string(r.Timestamp))
			log.rows = append(log.rows, traceRow{in: *r.InputLength, out: *r.OutputLength, hash: r.HashIDs, chat: link.chat, parent: link.parent})
		}
	}
	// Mooncake writes integer milliseconds; Qwen-Bailian writes seconds
	// with a fraction. Epoch stamps are told apart by magnitude.
	unit, scale := "ms", int64(1e6)
	for _, s := range stamps {
		if strings.ContainsAny(s, ".eE") {
			unit, scale = "s", 1e9
			break
		}
	}
	if unit == "ms" {
		var maxV big.Rat
		for _, s := range stamps {
			v, ok := new(big.Rat).SetString(s)
			if ok && v.Cmp(&maxV) > 0 {
				maxV.Set(v)
			}
		}
		if maxV.Cmp(big.NewRat(1e9, 1)) >= 0 && maxV.Cmp(big.NewRat(1e11, 1)) < 0 {
			unit, scale = "s (epoch)", 1e9
		}
	}
	log.unit = unit
	for i, s := range stamps {
		t, err := decimalNs(s, scale)
		if err != nil {
			return nil, fmt.Errorf("Mooncake log request %d: timestamp %q: %v", i+1, s, err)
		}
		log.rows[i].t = t
	}
	if len(links) > 0 && links[0].has {
		orphans, err := checkChains(log.rows, links, stamps, opt.orphansStart)
		if err != nil {
			return nil, err
		}
		log.orphans = orphans
		log.sessions, log.format = true, TraceBailian
	}
	log.blockSize = inferBlockSize(log.rows)
	return log, nil
}

// inferBlockSize finds the hash block size in tokens: the smallest power
// of two B with len(hash_ids) == ceil(input_length / B) on every row
// (Mooncake uses 512, Qwen-Bailian 16). 0 when no row has hash ids.
func inferBlockSize(rows []traceRow) int {
	hashed := false
	for _, r := range rows {
		if len(r.hash) > 0 {
			hashed = true
			break
		}
	}
	if !hashed {
		return 0
	}
	for b := 1; b <= 1<<20; b *= 2 {
		ok := true
		for _, r := range rows {
			if len(r.hash) > 0 && (r.in+b-1)/b != len(r.hash) {
				ok = false
				break
			}
		}
		if ok {
			return b
		}
	}
	return defaultBlockSize
}

// decimalNs converts a decimal number of units (scale ns each) to ns
// exactly, rounding half away from zero.
func decimalNs(s string, scale int64) (int64, error) {
	v, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, errors.New("not a number")
	}
	v.Mul(v, new(big.Rat).SetInt64(scale))
	if v.Sign() < 0 {
		return 0, errors.New("negative time")
	}
	limit := new(big.Rat).SetInt64(1 << 62)
	if v.Cmp(limit) > 0 {
		return 0, errors.New("too far in the future")
	}
	q, r := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
	if r.Lsh(r, 1).Cmp(v.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64(), nil
}

func parseCSVTrace(br *bufio.Reader) (*traceLog, error) {
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	hdr, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("the request log is neither JSONL nor a CSV with a header: %v", err)
	}
	col := map[string]int{}
	for i, h := range hdr {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if _, ok := col[n]; !ok {
				return false
			}
		}
		return true
	}
	var log *traceLog
	var tc, ic, oc int
	switch {
	case has("timestamp", "contexttokens", "generatedtokens"):
		log = &traceLog{format: TraceAzure, unit: "datetime"}
		tc, ic, oc = col["timestamp"], col["contexttokens"], col["generatedtokens"]
	case has("timestamp", "request tokens", "response tokens"):
		log = &traceLog{format: TraceBurstGPT, unit: "s"}
		tc, ic, oc = col["timestamp"], col["request tokens"], col["response tokens"]
	default:
		return nil, fmt.Errorf("unknown request log format (header %q): supported are Mooncake/Qwen-Bailian JSONL, Azure LLM inference CSV (TIMESTAMP,ContextTokens,GeneratedTokens) and BurstGPT CSV (Timestamp,Request tokens,Response tokens)", strings.Join(hdr, ","))
	}
	need := max(tc, ic, oc)
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s log: %v", log.format, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) <= need {
			return nil, fmt.Errorf("%s log line %d: %d fields, want at least %d", log.format, line, len(rec), need+1)
		}
		in, err1 := atoiField(rec[ic])
		out, err2 := atoiField(rec[oc])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s log line %d: token counts %q and %q must be whole numbers ≥ 0", log.format, line, rec[ic], rec[oc])
		}
		var t int64
		if log.format == TraceAzure {
			t, err = azureTime(rec[tc])
		} else {
			t, err = decimalNs(strings.TrimSpace(rec[tc]), 1e9)
		}
		if err != nil {
			return nil, fmt.Errorf("%s log line %d: timestamp %q: %v", log.format, line, rec[tc], err)
		}
		if log.format == TraceBurstGPT && out == 0 {
			// BurstGPT logs failed requests with 0 response tokens.
			log.failures++
			continue
		}
		if len(log.rows) >= maxTraceRows {
			return nil, fieldErr("Window", fmt.Sprintf("is needed: the request log has more than %d requests", maxTraceRows), "take a slice of it")
		}
		log.rows = append(log.rows, traceRow{t: t, in: in, out: out})
	}
	return log, nil
}

func atoiField(s string) (int, error) {
	s = strings.TrimSpace(s)
	// Some exports write counts as floats ("512.0").
	s = strings.TrimSuffix(s, ".0")
	n := 0
	if s == "" {
		return 0, errors.New("empty")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("not a whole number")
		}
		n = n*10 + int(c-'0')
		if n > 1<<30 {
			return 0, errors.New("too large")
		}
	}
	return n, nil
}

// azureTime reads the Azure traces' TIMESTAMP: "2023-11-16 18:15:46.6805900"
// with zero to nine fraction digits (the files mix them), UTC.
func azureTime(s string) (int64, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 1970 || t.Year() > 2200 {
				return 0, errors.New("year out of range")
			}
			return t.UnixNano(), nil
		}
	}
	return 0, errors.New(`want a datetime like "2023-11-16 18:15:46.6805900"`)
}

// window is a parsed --window START:END in seconds of the log.
type window struct {
	start, end int64 // ns from the log's first request; end < 0: open
	spec       string
}

func parseWindow(s string) (window, error) {
	w := window{end: -1, spec: s}
	if s == "" {
		return w, nil
	}
	a, b, ok := strings.Cut(s, ":")
	bad := fieldErr("Window", fmt.Sprintf("%q is not a window", s), "use START:END in seconds of the log, e.g. 60:120 (either may be empty)")
	if !ok {
		return w, bad
	}
	var err error
	if a != "" {
		if w.start, err = decimalNs(a, 1e9); err != nil {
			return w, bad
		}
	}
	if b != "" {
		if w.end, err = decimalNs(b, 1e9); err != nil {
			return w, bad
		}
		if w.end <= w.start {
			return w, fieldErr("Window", fmt.Sprintf("%q ends before it starts", s), "END must be after START")
		}
	}
	return w, nil
}
