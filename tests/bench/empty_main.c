/* The baseline for scripts/runtime_size.sh: the same libc calls, no runtime. */
#include <stdio.h>

int main(int argc, char **argv) {
  FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
  if (f)
    fclose(f);
  puts("");
  return 0;
}
