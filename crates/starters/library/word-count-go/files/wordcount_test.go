package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestWordsAreLettersDigitsAndApostrophes(t *testing.T) {
	got := Words("Don't stop -- it's 2 o'clock!", false, 1)
	want := []string{"Don't", "stop", "it's", "2", "o'clock"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Words = %q, want %q", got, want)
	}
}

func TestCountsWordsInAnyAlphabetAndIgnoresExtraSpaces(t *testing.T) {
	if n := len(Words("  olá   mundo\n\nnovo ", true, 1)); n != 3 {
		t.Errorf("got %d words, want 3", n)
	}
	if n := len(Words("", true, 1)); n != 0 {
		t.Errorf("got %d words in an empty text, want 0", n)
	}
}

func TestCaseAndShortWordsFollowTheOptions(t *testing.T) {
	if got := Words("The the THE a", true, 2); !reflect.DeepEqual(got, []string{"the", "the", "the"}) {
		t.Errorf("ignoring case: %q", got)
	}
	if got := Words("The the a", false, 1); !reflect.DeepEqual(got, []string{"The", "the", "a"}) {
		t.Errorf("keeping case: %q", got)
	}
}

func TestMostCommonWordsFirst(t *testing.T) {
	got := TopWords(strings.Fields("b a b c b a"), 2)
	want := []Count{Count{"b", 3}, Count{"a", 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TopWords = %v, want %v", got, want)
	}
	if got := TopWords([]string{"a"}, 0); len(got) != 0 {
		t.Errorf("TopWords(0) = %v", got)
	}
}

func TestReportCountsLinesWordsAndCharacters(t *testing.T) {
	lines := strings.Split(Report("one two\nthree\n", 1), "\n")
	for i, want := range []string{": 2", ": 3", ": 14"} {
		if !strings.HasSuffix(lines[i], want) {
			t.Errorf("line %d = %q, want it to end with %q", i, lines[i], want)
		}
	}
}
