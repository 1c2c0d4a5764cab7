// HAL device local-task: a fixed pool of threads runs the workgroups of one
// wave concurrently, each thread a static share of each dispatch (see
// runItems). Each workgroup computes a fixed tile, so results do not depend
// on which thread ran it.
#include "device.h"
#include "status.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

using namespace kiln::runtime;

namespace {

struct Pool {
  size_t threads = 1;
  pthread_t *workers = nullptr;
  size_t started = 0;
  pthread_mutex_t mutex;
  pthread_cond_t wake;
  /// Held by the caller of executeWave for its whole wave: the wave state
  /// below (dispatches, prefix, claims, doneShares, generation) describes
  /// one wave, so callers on other threads (other modules sharing the
  /// device) wait here until it completes.
  pthread_mutex_t submit;
  // Current wave, published by a release increment of `generation`.
  const kiln_dispatch_t *dispatches = nullptr;
  size_t dispatchCount = 0;
  uint32_t *prefix = nullptr; // workgroup prefix sums, sized for the wave
  size_t prefixCapacity = 0;
  uint64_t totalItems = 0;
  kiln_trace_t *trace = nullptr;
  uint64_t generation = 0; // atomic
  bool stopping = false;   // atomic
  // Per participant: its share of the current wave, (generation << 1) |
  // claimed. The owner claims it when it starts the wave; the caller
  // claims (steals) a worker's share the worker has not claimed within
  // kStealAfterNs, so a worker the OS has descheduled cannot hold the wave.
  uint64_t *claims = nullptr;
  size_t doneShares = 0;   // atomic: worker shares of the current wave finished
  size_t sleepers = 0;     // atomic: workers asleep or falling asleep on `wake`
};

struct WorkerArg {
  Pool *pool;
  uint32_t index;
};

/// Spin iterations (about 10-50 us) before a worker sleeps on the condition
/// variable: waves follow each other within microseconds, and a futex
/// wake-up costs tens of them. Kept short so an oversubscribed machine is not
/// starved by spinning threads.
const int kSpinIterations = 2000;
/// How long an idle worker spins for the next wave before it sleeps, ns.
const uint64_t kSpinNs = 200 * 1000;
/// How long after publishing a wave the caller, done with its own share,
/// waits for a worker to claim its share before running it itself, ns. A
/// spinning worker claims within about a microsecond; a sleeping one needs a
/// futex wake-up (tens of microseconds); a descheduled one (another process
/// on its core) a scheduler time slice (milliseconds), which two threads on
/// a busy 2-core machine used to wait out at every wave (9 ms instead of
/// 0.5 ms for BlazeFace).
const uint64_t kStealAfterNs = 5 * 1000;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Runs thread `thread`'s share of the wave: of each dispatch, share s of
/// P (P participants; the caller is thread 0), the contiguous workgroups
/// [ceil(n s / P), ceil(n (s + 1) / P)) of its n. A static split keeps a
/// thread on the same rows of consecutive dispatches, so what one dispatch
/// writes the next reads from the same core's cache; a shared counter
/// handed the rows out at random and two threads were slower than one on
/// BlazeFace (cross-core cache traffic), and so did rotating the shares of
/// a wave's second dispatch. Share s goes to thread s, except in
/// dispatches with fewer workgroups than threads: those take the threads
/// after the previous such dispatch of the wave, so several small
/// dispatches of one wave do not all land on thread 0.
/// `runner` is the thread that runs the share (for the trace).
void runItems(Pool *pool, uint32_t thread, uint64_t participants, uint32_t runner) {
  uint64_t shift = 0;
  for (size_t d = 0; d < pool->dispatchCount; ++d) {
    const kiln_dispatch_t &dispatch = pool->dispatches[d];
    const uint64_t n = pool->prefix[d + 1] - pool->prefix[d];
    uint64_t share = thread;
    if (n < participants) {
      share = (thread + participants - shift) % participants;
      shift = (shift + n) % participants;
    }
    const uint64_t lo = (n * share + participants - 1) / participants;
    const uint64_t hi = (n * (share + 1) + participants - 1) / participants;
    for (uint64_t w = lo; w < hi; ++w) {
      uint64_t start = pool->trace ? nowNs() : 0;
      runWorkgroup(dispatch, static_cast<uint32_t>(w));
      if (pool->trace)
        recordEvent(pool->trace, dispatch.command, static_cast<uint32_t>(w), runner, start,
                    nowNs());
    }
  }
}

void *workerMain(void *raw) {
  WorkerArg *arg = static_cast<WorkerArg *>(raw);
  Pool *pool = arg->pool;
  uint32_t index = arg->index;
  free(arg);
  uint64_t seen = 0;
  for (;;) {
    // Spin for the next wave for up to kSpinNs before sleeping: waves of
    // a model follow each other within microseconds, and a sleeping worker
    // costs a futex wake-up (tens of microseconds) that the caller waits
    // out at the end of the wave.
    uint64_t now = seen;
    const uint64_t spinUntil = nowNs() + kSpinNs;
    for (unsigned spin = 0;; ++spin) {
      now = __atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE);
      if (now != seen || __atomic_load_n(&pool->stopping, __ATOMIC_ACQUIRE))
        break;
      if ((spin & 63) == 63 && nowNs() > spinUntil)
        break;
      cpuRelax();
    }
    if (now == seen) {
      pthread_mutex_lock(&pool->mutex);
      __atomic_fetch_add(&pool->sleepers, 1, __ATOMIC_SEQ_CST);
      while (!__atomic_load_n(&pool->stopping, __ATOMIC_ACQUIRE) &&
             __atomic_load_n(&pool->generation, __ATOMIC_SEQ_CST) == seen)
        pthread_cond_wait(&pool->wake, &pool->mutex);
      __atomic_fetch_sub(&pool->sleepers, 1, __ATOMIC_SEQ_CST);
      pthread_mutex_unlock(&pool->mutex);
      now = __atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE);
    }
    if (__atomic_load_n(&pool->stopping, __ATOMIC_ACQUIRE))
      return nullptr;
    seen = now;
    // Run this thread's share unless the caller took it (or already moved
    // on to a later wave: then the claim holds a newer generation and this
    // thread reads nothing of the wave).
    uint64_t unclaimed = now << 1;
    if (__atomic_compare_exchange_n(&pool->claims[index], &unclaimed, unclaimed | 1, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      runItems(pool, index, pool->started + 1, index);
      __atomic_fetch_add(&pool->doneShares, 1, __ATOMIC_RELEASE);
    }
  }
}

/// Runs one wave with the pool; the caller holds pool->submit.
void runWave(Pool *pool, const kiln_dispatch_t *dispatches, size_t count,
             kiln_trace_t *trace) {
  uint64_t waveStart = trace ? nowNs() : 0;
  pool->prefix[0] = 0;
  for (size_t i = 0; i < count; ++i)
    pool->prefix[i + 1] = pool->prefix[i] + workgroupTotal(dispatches[i]);
  pool->dispatches = dispatches;
  pool->dispatchCount = count;
  pool->totalItems = pool->prefix[count];
  pool->trace = trace;
  size_t helpers = pool->started;
  if (pool->totalItems > 1 && helpers > 0) {
    const uint64_t generation = pool->generation + 1; // only the submit holder writes it
    const uint64_t stealAt = nowNs() + kStealAfterNs;
    for (size_t t = 1; t <= helpers; ++t)
      __atomic_store_n(&pool->claims[t], generation << 1, __ATOMIC_RELAXED);
    __atomic_store_n(&pool->doneShares, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pool->generation, generation, __ATOMIC_SEQ_CST);
    // Spinning workers see the new generation; only sleepers need the
    // mutex and a wake-up. A worker about to sleep increments `sleepers`
    // under the mutex before it checks the generation again, so either it
    // sees the new generation or this load sees it asleep (both sides are
    // sequentially consistent).
    if (__atomic_load_n(&pool->sleepers, __ATOMIC_SEQ_CST) != 0) {
      pthread_mutex_lock(&pool->mutex);
      pthread_cond_broadcast(&pool->wake);
      pthread_mutex_unlock(&pool->mutex);
    }
    runItems(pool, 0, helpers + 1, 0);
    // Shares no worker has claimed by the deadline, the caller runs.
    for (size_t t = 1; t <= helpers; ++t) {
      for (unsigned spin = 0;; ++spin) {
        uint64_t unclaimed = generation << 1;
        if (__atomic_load_n(&pool->claims[t], __ATOMIC_ACQUIRE) != unclaimed)
          break; // the worker has it
        if ((spin & 63) == 63 && nowNs() > stealAt) {
          if (__atomic_compare_exchange_n(&pool->claims[t], &unclaimed, unclaimed | 1, false,
                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            runItems(pool, static_cast<uint32_t>(t), helpers + 1, 0);
            __atomic_fetch_add(&pool->doneShares, 1, __ATOMIC_RELAXED);
          }
          break;
        }
        cpuRelax();
      }
    }
    // Wait for the claimed shares' last workgroups: spin briefly, then
    // yield the core (a descheduled worker may need it to finish).
    for (int spin = 0; __atomic_load_n(&pool->doneShares, __ATOMIC_ACQUIRE) != helpers; ++spin) {
      if (spin < kSpinIterations)
        cpuRelax();
      else
        sched_yield();
    }
  } else {
    runItems(pool, 0, 1, 0);
  }
  if (trace) {
    // One interval per dispatch of the wave: the wave's span (they overlap).
    uint64_t end = nowNs();
    for (size_t i = 0; i < count; ++i)
      recordEvent(trace, dispatches[i].command, UINT32_MAX, 0, waveStart, end);
  }
}

kiln_status_t executeWave(void *self, const kiln_dispatch_t *dispatches, size_t count,
                          kiln_trace_t *trace) {
  Pool *pool = static_cast<Pool *>(self);
  if (count + 1 > pool->prefixCapacity)
    return makeStatus(KILN_RESOURCE_EXHAUSTED,
                      "local-task: wave of %zu dispatches exceeds the %zu it was created for",
                      count, pool->prefixCapacity - 1);
  pthread_mutex_lock(&pool->submit);
  runWave(pool, dispatches, count, trace);
  pthread_mutex_unlock(&pool->submit);
  return kiln_status_ok();
}

void releasePool(void *self) {
  Pool *pool = static_cast<Pool *>(self);
  if (!pool)
    return;
  pthread_mutex_lock(&pool->mutex);
  __atomic_store_n(&pool->stopping, true, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  for (size_t i = 0; i < pool->started; ++i)
    pthread_join(pool->workers[i], nullptr);
  pthread_mutex_destroy(&pool->mutex);
  pthread_mutex_destroy(&pool->submit);
  pthread_cond_destroy(&pool->wake);
  free(pool->workers);
  free(pool->claims);
  free(pool->prefix);
  free(pool);
}

} // namespace

/// Largest number of dispatches one wave may hold on a local-task device.
static const size_t kMaxWaveDispatches = 4096;

extern "C" kiln_status_t kiln_device_create_local_task(size_t threads, kiln_device_t *out_device) {
  if (!out_device)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_device_create_local_task: null device");
  memset(out_device, 0, sizeof(*out_device));
  if (threads == 0 || threads > 256)
    return makeStatus(KILN_INVALID_ARGUMENT, "local-task takes 1 to 256 threads, %zu given",
                      threads);
  Pool *pool = static_cast<Pool *>(calloc(1, sizeof(Pool)));
  if (!pool)
    return makeStatus(KILN_RESOURCE_EXHAUSTED, "out of memory creating local-task");
  pool->threads = threads;
  pthread_mutex_init(&pool->mutex, nullptr);
  pthread_mutex_init(&pool->submit, nullptr);
  pthread_cond_init(&pool->wake, nullptr);
  pool->prefixCapacity = kMaxWaveDispatches + 1;
  pool->prefix = static_cast<uint32_t *>(calloc(pool->prefixCapacity, sizeof(uint32_t)));
  pool->workers = static_cast<pthread_t *>(calloc(threads, sizeof(pthread_t)));
  pool->claims = static_cast<uint64_t *>(calloc(threads, sizeof(uint64_t)));
  if (!pool->prefix || !pool->workers || !pool->claims) {
    releasePool(pool);
    return makeStatus(KILN_RESOURCE_EXHAUSTED, "out of memory creating local-task");
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  // Kernels keep tile-local temporaries on the stack.
  pthread_attr_setstacksize(&attr, 8u << 20);
  for (size_t i = 1; i < threads; ++i) {
    WorkerArg *arg = static_cast<WorkerArg *>(malloc(sizeof(WorkerArg)));
    if (!arg) {
      pthread_attr_destroy(&attr);
      releasePool(pool);
      return makeStatus(KILN_RESOURCE_EXHAUSTED, "out of memory creating local-task");
    }
    arg->pool = pool;
    arg->index = static_cast<uint32_t>(i);
    if (pthread_create(&pool->workers[pool->started], &attr, workerMain, arg) != 0) {
      free(arg);
      pthread_attr_destroy(&attr);
      releasePool(pool);
      return makeStatus(KILN_RESOURCE_EXHAUSTED, "cannot start local-task thread %zu", i);
    }
    ++pool->started;
  }
  pthread_attr_destroy(&attr);
  out_device->name = "local-task";
  out_device->self = pool;
  out_device->execute_wave = executeWave;
  out_device->release = releasePool;
  return kiln_status_ok();
}
