"""The course on disk and its term: the course folder, the term file, intake of hand-ins, lateness, the student bundle and the release check."""
