// The doctest runner: every tests/*.cpp registers its cases into this one binary.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
