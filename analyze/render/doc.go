// Package render turns analyze's results into the tables people read: the
// concurrency-sweep and metrics views, the prefill scaling notes and the
// warnings, as text, Markdown or CSV (with every server string escaped and
// spreadsheet formulas guarded).
//
// It is a client of analyze's core and imports only analyze and ground
// helpers; it computes no metric of its own.
package render
