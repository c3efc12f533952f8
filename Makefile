# Convenience entry points; the build itself is CMake (scripts/build.sh, scripts/test.sh).
.PHONY: fuzz fuzz-smoke

# Every fuzz target for 60 s each (scripts/fuzz.sh --help for the options).
fuzz:
	scripts/fuzz.sh

# Every fuzz target for 10 s each, then 4 s each from an empty corpus, as CI runs it.
fuzz-smoke:
	scripts/fuzz.sh --smoke
