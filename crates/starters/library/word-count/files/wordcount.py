"""Counts the words, lines and characters of a text, and its most common words."""

import re
from collections import Counter

DESCRIPTION = {{ title|tojson }}
TOP = {{ top }}
IGNORE_CASE = {% if ignore_case %}True{% else %}False{% endif %}
MIN_LENGTH = {{ min_length }}
LABELS = {
    "lines": {{ lines_label|tojson }},
    "words": {{ words_label|tojson }},
    "characters": {{ characters_label|tojson }},
    "top": {{ top_label|tojson }},
}

# A word is letters, digits and apostrophes ("don't" is one word), in any alphabet.
WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def words(text: str, ignore_case: bool = IGNORE_CASE, min_length: int = MIN_LENGTH) -> list[str]:
    """The words of `text`, in order, lower-cased when `ignore_case`, without the short ones."""
    found = WORD.findall(text)
    if ignore_case:
        found = [w.lower() for w in found]
    return [w for w in found if len(w) >= min_length]


def count_words(text: str, **options) -> int:
    return len(words(text, **options))


def top_words(text: str, n: int = TOP, **options) -> list[tuple[str, int]]:
    """The `n` most common words with their counts, most common first (ties in order of appearance)."""
    return Counter(words(text, **options)).most_common(max(n, 0))


def report(text: str, n: int = TOP) -> str:
    """What the program prints for a text."""
    lines = [
        f"{LABELS['lines']}: {len(text.splitlines())}",
        f"{LABELS['words']}: {count_words(text)}",
        f"{LABELS['characters']}: {len(text)}",
    ]
    common = top_words(text, n)
    if common:
        lines.append(f"{LABELS['top']}:")
        lines.extend(f"  {word}: {count}" for word, count in common)
    return "\n".join(lines)
