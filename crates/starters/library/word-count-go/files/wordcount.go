package main

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// Description is what the program does, shown by --help.
const Description = {{ title|tojson }}

// Top is how many of the most common words are listed.
const Top = {{ top }}

// IgnoreCase counts "The" and "the" as one word.
const IgnoreCase = {% if ignore_case %}true{% else %}false{% endif %}

// MinLength is the shortest word counted, in letters.
const MinLength = {{ min_length }}

var labels = map[string]string{
	"lines":      {{ lines_label|tojson }},
	"words":      {{ words_label|tojson }},
	"characters": {{ characters_label|tojson }},
	"top":        {{ top_label|tojson }},
}

// Words are runs of letters and digits, apostrophes inside them included ("don't").
func Words(text string, ignoreCase bool, minLength int) []string {
	var out []string
	for _, field := range strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'')
	}) {
		w := strings.Trim(field, "'")
		if ignoreCase {
			w = strings.ToLower(w)
		}
		if w != "" && len([]rune(w)) >= minLength {
			out = append(out, w)
		}
	}
	return out
}

// Count is a word and how often it appears.
type Count struct {
	Word string
	N    int
}

// TopWords lists the n most common words, most common first (ties in order of appearance).
func TopWords(words []string, n int) []Count {
	seen := map[string]int{}
	var order []Count
	for _, w := range words {
		if i, ok := seen[w]; ok {
			order[i].N++
			continue
		}
		seen[w] = len(order)
		order = append(order, Count{w, 1})
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].N > order[j].N })
	if n < 0 {
		n = 0
	}
	if n < len(order) {
		order = order[:n]
	}
	return order
}

// Report is what the program prints for a text.
func Report(text string, n int) string {
	words := Words(text, IgnoreCase, MinLength)
	lines := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		lines++
	}
	out := fmt.Sprintf("%s: %d\n%s: %d\n%s: %d", labels["lines"], lines, labels["words"], len(words), labels["characters"], len([]rune(text)))
	if common := TopWords(words, n); len(common) > 0 {
		out += "\n" + labels["top"] + ":"
		for _, c := range common {
			out += fmt.Sprintf("\n  %s: %d", c.Word, c.N)
		}
	}
	return out
}
