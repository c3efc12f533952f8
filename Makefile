# Convenience entry points; the build itself is CMake (scripts/build.sh, scripts/test.sh).
.PHONY: fuzz fuzz-smoke

# Every fuzz target for 60 s each (scripts/fuzz.sh --help for the options).
fuzz:
	scripts/fuzz.sh

# Every fuzz target for 10 s each, as CI runs it.
fuzz-smoke:
	scripts/fuzz.sh --smoke
