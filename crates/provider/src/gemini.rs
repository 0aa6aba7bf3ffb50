//! Gemini generateContent adapter (in progress).
