// sim_stream.h: the sim device's stream: a worker thread that runs queued work in order, after an
// optional random delay per task (TIDE_SIM_MAX_DELAY_US), like a real accelerator's queue. A
// failing task's error is kept and reported by the next Synchronize, as a device reports an
// asynchronous fault.
#pragma once

#include <tide/plugin_api.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// --- The sim device's clock and tracer (issue 33) ---
// Its own clock: ns since the plugin was loaded, plus a day, so that a record the core forgot to
// map onto its own clock lands far from the ops.
inline uint64_t SimClockNs() {
  static const auto origin = std::chrono::steady_clock::now();
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - origin)
                      .count()) +
         uint64_t(86400) * 1000000000u;
}

// What the tracer recorded (TideTraceRecord, with the name owned).
struct SimTraceRecord {
  std::string name;
  int32_t device, stream;
  uint64_t begin_ns, end_ns, bytes;
  TideTraceKind kind;
};
struct SimTraceLog {
  std::atomic<bool> on{false};
  std::mutex mu;
  std::vector<SimTraceRecord> records;
  void Add(SimTraceRecord r) {
    std::lock_guard<std::mutex> lock(mu);
    records.push_back(std::move(r));
  }
};
inline SimTraceLog& SimTrace() {
  static SimTraceLog log;
  return log;
}

// A sim event: a count of records and of records the stream has reached; done when they match.
struct SimEvent {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0, reached = 0;
  uint64_t reached_ns = 0;  // the sim clock when the stream last reached a record of it
  // The error of the work its last record marked (the stream's pending fault), or "": work
  // that waits for it fails with it, as the device contract asks.
  std::string error;
  void WaitFor(uint64_t target) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return reached >= target; });
  }
};

class SimStream {
 public:
  struct Task {
    std::function<void()> fn;
    std::string op;          // the op whose kernel queued it, or ""
    std::string trace_name;  // what the tracer calls it; "": not traced (events, frees)
    TideTraceKind kind;
    uint64_t bytes;
  };

  // `id`: its trace row (the role of the context it serves, TideStreamRole).
  explicit SimStream(unsigned max_delay_us, unsigned seed, int32_t device = 0, int32_t id = 0)
      : max_delay_us_(max_delay_us), rng_(seed), device_(device), id_(id), worker_([this] {
          Loop();
        }) {}
  ~SimStream() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  // `op`: the op whose kernel queued the task (copied; may be null), named in its error, as a
  // device's error word names what faulted.
  // A kernel's task is traced under its op's name (TIDE_TRACE_KERNEL).
  void Enqueue(std::function<void()> task, const char* op = nullptr) {
    Push({std::move(task), op ? op : "", op ? op : "", TIDE_TRACE_KERNEL, 0});
  }
  // A copy, memset or other task the tracer records under `name`.
  void EnqueueTraced(std::function<void()> task, const char* name, TideTraceKind kind,
                     uint64_t bytes) {
    Push({std::move(task), "", name, kind, bytes});
  }

  // Marks the work queued so far: the event is done when the stream gets here.
  void Record(SimEvent* e) {
    uint64_t target;
    {
      std::lock_guard<std::mutex> lock(e->mu);
      target = ++e->recorded;
    }
    Enqueue([this, e, target] {
      const std::string fault = PendingError();
      {
        std::lock_guard<std::mutex> lock(e->mu);
        if (e->reached < target) e->reached = target, e->reached_ns = SimClockNs();
        e->error = fault;
      }
      e->cv.notify_all();
    });
  }
  // Work queued from now on waits for what the event marks now (not for later records).
  void Wait(SimEvent* e) {
    uint64_t target;
    {
      std::lock_guard<std::mutex> lock(e->mu);
      target = e->recorded;
    }
    Enqueue([e, target] {
      e->WaitFor(target);
      std::lock_guard<std::mutex> lock(e->mu);
      if (!e->error.empty())
        throw std::runtime_error("waited for work of another stream that failed: " + e->error);
    });
  }
  // The first error a task raised since the last Synchronize, or "".
  std::string PendingError() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

  // Capture (TideDeviceGraphs): between BeginCapture and EndCapture the tasks pushed are
  // recorded instead of queued; Launch queues copies of them, in order. A call the stream cannot
  // record (FailCapture: a host copy, an event, a wait) spoils the capture, as CUDA's does.
  void BeginCapture() {
    std::lock_guard<std::mutex> lock(mu_);
    if (capturing_) throw std::runtime_error("sim: the stream is capturing already");
    capturing_ = true;
    captured_.clear();
    capture_error_.clear();
  }
  bool capturing() {
    std::lock_guard<std::mutex> lock(mu_);
    return capturing_;
  }
  // Marks the capture failed (the first reason is kept); false when the stream is not capturing.
  bool FailCapture(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!capturing_) return false;
    if (capture_error_.empty()) capture_error_ = why;
    return true;
  }
  // The recorded tasks; throws (out of capture either way) when the capture was spoiled.
  std::vector<Task> EndCapture() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!capturing_) throw std::runtime_error("sim: the stream is not capturing");
    capturing_ = false;
    if (!capture_error_.empty())
      throw std::runtime_error("sim: the capture failed: " + capture_error_);
    return std::move(captured_);
  }
  void Launch(const std::vector<Task>& tasks) {
    for (const Task& t : tasks) Push(t, /*capturable=*/false);
  }
  // Queued now even while capturing (frees: the core keeps what a capture uses alive).
  void EnqueueLive(std::function<void()> task) {
    Push({std::move(task), "", "", TIDE_TRACE_OTHER, 0}, /*capturable=*/false);
  }

  // Waits for every queued task; returns (and clears) the first error one of them raised.
  std::string Synchronize() {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [this] { return pending_ == 0; });
    std::string error;
    error.swap(error_);
    return error;
  }

 private:
  void Loop() {
    for (;;) {
      Task task;
      unsigned delay = 0;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        task = std::move(queue_.front());
        queue_.pop_front();
        if (max_delay_us_) delay = std::uniform_int_distribution<unsigned>(0, max_delay_us_)(rng_);
      }
      if (delay) std::this_thread::sleep_for(std::chrono::microseconds(delay));
      std::string error;
      const bool traced = !task.trace_name.empty() && SimTrace().on.load();
      const uint64_t begin = traced ? SimClockNs() : 0;
      try {
        // TIDE_SIM_KERNEL_US / TIDE_SIM_COPY_US: each kernel's / copy's own device time, inside
        // its trace record.
        const unsigned own_us = task.kind == TIDE_TRACE_KERNEL && !task.op.empty() ? KernelUs()
                                : task.kind == TIDE_TRACE_COPY                     ? CopyUs()
                                                                                   : 0;
        if (own_us) std::this_thread::sleep_for(std::chrono::microseconds(own_us));
        task.fn();
      } catch (const std::exception& e) {
        error = task.op.empty() ? e.what() : "op '" + task.op + "': " + e.what();
      }
      if (traced)
        SimTrace().Add({task.trace_name, device_, id_, begin, SimClockNs(), task.bytes, task.kind});
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!error.empty() && error_.empty()) error_ = error;
        --pending_;
      }
      idle_.notify_all();
    }
  }

  static unsigned EnvUs(const char* name) {
    const char* v = std::getenv(name);
    return v ? unsigned(std::strtoul(v, nullptr, 10)) : 0u;
  }
  static unsigned KernelUs() {
    static const unsigned us = EnvUs("TIDE_SIM_KERNEL_US");
    return us;
  }
  static unsigned CopyUs() {
    static const unsigned us = EnvUs("TIDE_SIM_COPY_US");
    return us;
  }

  void Push(Task task, bool capturable = true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (capturing_ && capturable) {
        captured_.push_back(std::move(task));
        return;
      }
      queue_.push_back(std::move(task));
      ++pending_;
    }
    cv_.notify_all();
  }

  unsigned max_delay_us_;
  std::mt19937 rng_;
  int32_t device_, id_;
  std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::deque<Task> queue_;
  size_t pending_ = 0;
  bool stop_ = false;
  std::string error_;
  bool capturing_ = false;
  std::vector<Task> captured_;
  std::string capture_error_;
  std::thread worker_;  // last: starts after the members it uses
};
