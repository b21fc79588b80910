#define _GNU_SOURCE
#include "vips_shim.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

/* liborc up to 0.4.33 (Debian 12's) hands out and takes back the executable memory of compiled programs
 * partly outside its own lock: orc_code_allocate_codemem splits and marks a free chunk after the lock is
 * released, and orc_code_chunk_free merges chunks (freeing their records) without it. Two threads
 * compiling or freeing programs at once can give one chunk to two programs, or merge a chunk another
 * thread is splitting; the process then crashes in liborc or in the code it generated. liborc 0.4.34 fixed
 * it (commit e48fa54, "Fix for potential race in codemem alloc/free"). libvips compiles an orc program
 * for every vectorised reduce it builds (reducev, on the transform threads, for each request) and frees it
 * when the operation goes, so two transform threads race there: the segfault in liborc during #19 (a
 * reducev on a pool thread), and its `vips_object_dispose_argument` assertion, the same race's heap
 * corruption met in a libvips object (scripts/check-orc-race.sh reproduces both without this file and
 * runs clean with it).
 *
 * libvips calls liborc through its dynamic symbols, so the process defines orc_program_compile and
 * orc_program_free itself (the executable's definitions come first in symbol lookup) and runs liborc's
 * under one lock: a compile and a free never overlap. The calls inside liborc are not affected; a compile
 * costs tens of microseconds, once per reduce built. ipx_orc_serialized_calls counts the calls that went
 * through here (tests check that libvips' calls do). */

typedef int (*ipx_orc_compile_fn)(void *program);
typedef void (*ipx_orc_free_fn)(void *program);

static pthread_mutex_t ipx_orc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t ipx_orc_once = PTHREAD_ONCE_INIT;
static ipx_orc_compile_fn ipx_orc_real_compile;
static ipx_orc_free_fn ipx_orc_real_free;
static atomic_long ipx_orc_calls;

static void ipx_orc_resolve(void) {
    ipx_orc_real_compile = (ipx_orc_compile_fn)dlsym(RTLD_NEXT, "orc_program_compile");
    ipx_orc_real_free = (ipx_orc_free_fn)dlsym(RTLD_NEXT, "orc_program_free");
}

int orc_program_compile(void *program) {
    pthread_once(&ipx_orc_once, ipx_orc_resolve);
    /* Not found only without liborc, when nobody calls this. 0x200 is ORC_COMPILE_RESULT_UNKNOWN_PARSE
       (not successful): libvips then runs its C path. */
    if (!ipx_orc_real_compile) return 0x200;
    atomic_fetch_add(&ipx_orc_calls, 1);
    pthread_mutex_lock(&ipx_orc_lock);
    int result = ipx_orc_real_compile(program);
    pthread_mutex_unlock(&ipx_orc_lock);
    return result;
}

void orc_program_free(void *program) {
    pthread_once(&ipx_orc_once, ipx_orc_resolve);
    if (!ipx_orc_real_free) return;
    atomic_fetch_add(&ipx_orc_calls, 1);
    pthread_mutex_lock(&ipx_orc_lock);
    ipx_orc_real_free(program);
    pthread_mutex_unlock(&ipx_orc_lock);
}

long ipx_orc_serialized_calls(void) { return atomic_load(&ipx_orc_calls); }
