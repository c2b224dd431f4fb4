// Package views holds kaasctl's typed views: one type per machine document
// a command prints (-o json, yaml, jsonl), and the functions that turn
// inspect's and repair's results into it and into its table and human
// forms (one function per format where the formats differ), handed to a
// render.Printer. Commands build a view and print it; they do not format.
package views
