-- llama.cpp on the phone's CPU cores, Q4_0, the target memory-mapped from
-- storage: the runtime of EdgeLLM's smartphone setting (EdgeLLM §II-B: "PyTorch-GPU
-- is used for Jetson devices and llama.cpp-CPU for smartphones"; a target larger
-- than the memory budget is swapped in from disk at every pass).
--
-- Every compute runs on the CPU (verify_unit = "cpu", sim/hw/sim_hw.h "Two
-- runtimes"): the target's layers and head at the SoC's cpu_gbps / cpu_gflops,
-- one batched pass over any number of rows (no compiled shapes, no NPU launch),
-- and the draft on the same cores, serialised with the target.  The weights
-- are not loaded by a loader: llama.cpp maps the model file (llama_mmap) and the
-- streamed part is paged in by faults as the compute touches it (sim_hw.h
-- "Memory-mapped weights"): requests of the block device's readahead, one
-- fault in flight per compute thread, nothing read ahead of the compute.
-- dram_fraction is read as the share of the target's layers the page cache
-- keeps between verifications: 0 is strict LRU, where a pass larger than the
-- cache evicts what the next needs first; more is Linux's active list, which
-- a scan larger than memory leaves in place (mm/workingset.c), holding what
-- fits beside the draft and the KV caches.
--
-- Nothing here is fitted: no timing of this runtime on these phones is
-- published with the detail a fit needs.  The NPU keys are placeholders that
-- no cost reads (the key table requires them).
return {
  -- the loader: page faults on the mapped model file ------------------------
  request_kb = 128,
  queue_depth = 4,
  stream_bits = 0,
  prefetch_layers = 0,
  request_latency_us = 8.0,
  read_during_draft = false,
  head_resident = false,
  pin_head = true,

  -- where it computes ------------------------------------------------------------
  verify_unit = "cpu",

  -- NPU keys: not read by this runtime ------------------------------------------
  npu_gflops = 1.0,
  launch_us = 0,
  sync_us = 0,
  npu_shapes = { 1 },
  verify_min_rows = 1,
  npu_call_us = 0,

  -- the set-up of a tree verification (sim/hw/sim_hw.h "The set-up") -----------
  verify_graph_us = 0,
  verify_setup_us = 0,
  verify_setup_one_row = false,
  verify_setup_streamed_us_per_gb = 0,
  verify_setup_resident_us_per_gb = 0,
  verify_setup_layer_us = 0,
  verify_row_us = 0,
  verify_kv_snapshot = false,
  verify_overlap = false,
  kv_seq_us = 0,

  -- memory and overlapping draft work ------------------------------------------
  kv_shared = false,
  contention_compute = 1.0,
  contention_load = 1.07,
  mem_upper_bound = 0.9,

  -- the alternative runtime of point key runtime = "speculative": the same
  -- page faults (this runtime has no other loader)
  spec_prefetch_layers = 0,
  spec_queue_depth = 4,

  cite = {
    request_kb = "a fault on a file mapping reads around the faulting page by the file's readahead window (Linux mm/filemap.c do_sync_mmap_readahead: ra_pages), which the block device's read_ahead_kb sets: 128 KiB, the kernel default (include/linux/mm.h VM_READAHEAD_PAGES = SZ_128K / PAGE_SIZE) and the value Android devices commonly restore after boot (Android init.rc sets read_ahead_kb per device)",
    stream_bits = "the mapped model file is read as stored (Q4_0): llama.cpp keeps one version of each tensor",
    queue_depth = "one fault in flight per compute thread (a thread blocks on its fault); 4 threads, llama.cpp's early default std::min(4, hardware_concurrency) (examples/common.h, 2023) and one thread per big core of these SoCs (1 prime + 3 performance cores): ggml splits a weight matrix's rows over the threads, so their faults fall on 4 separate places of the file",
    prefetch_layers = "nothing reads ahead of the compute by a layer: a page is read when the compute touches it (mmap, no loader); the kernel's asynchronous readahead runs one window (128 KiB) ahead of a faulting thread (mm/filemap.c do_async_mmap_readahead), a thousandth of a 13B layer; priced read-then-compute per layer (sim/hw/sim_hw.h 'Memory-mapped weights')",
    request_latency_us = "the UFS command latency at queue depth 1 fitted on the OnePlus 12's UFS 4.0 (runtime/lever-qnn: 8 us per request), paid per fault request; the flash part's range spans its generation. The kernel's fault path per request (page-cache insertion of 32 pages) is not charged apart",
    read_during_draft = "pages are read only when the compute touches them: nothing of the target is read while the draft runs",
    head_resident = "the output matrix is a tensor of the mapped file like the layers' (llama.cpp output.weight): paged in after the last layer at every verification unless the page cache keeps it",
    pin_head = "with every layer kept by the page cache the output matrix, touched at every pass as they are, is kept too",
    verify_unit = "llama.cpp's CPU backend (EdgeLLM §II-B: llama.cpp-CPU on the smartphones): ggml computes the target and the draft on the CPU cores",
    npu_gflops = "not read: the runtime runs no NPU graph (verify_unit = cpu); a placeholder the key table requires",
    launch_us = "not read: no NPU graph (verify_unit = cpu); ggml's graph scheduling on the CPU is not charged apart",
    sync_us = "not read: no NPU graph (verify_unit = cpu)",
    npu_shapes = "not read: llama.cpp builds its compute graph for the batch it is given (llama_decode of any n_tokens), so no row count is padded",
    verify_min_rows = "not read: no compiled multi-row graph",
    npu_call_us = "not read: no NPU call",
    verify_graph_us = "llama.cpp rebuilds the graph for each batch; on the CPU this is well under a millisecond against seconds of paging: none charged",
    verify_setup_us = "the tree mask and positions go into the batch (llama_batch with sequence ids, EdgeLLM §III-B's masking): negligible against the paging, none charged",
    verify_setup_one_row = "no tree graph to switch to: a one-row tree costs what a decode step does",
    verify_setup_streamed_us_per_gb = "the mapped weights are used in place (ggml reads the Q4_0 blocks from the mapping): no re-layout, none charged",
    verify_setup_resident_us_per_gb = "weights in the page cache are used in place: none charged",
    verify_setup_layer_us = "no buffer to prepare per layer: the mapping exists from load on; none charged",
    verify_row_us = "per-row mask and position entries of the batch: negligible, none charged",
    verify_kv_snapshot = "llama.cpp rolls rejected rows back by removing their cells (llama_kv_cache_seq_rm): no copy of the context",
    verify_overlap = "the verification pages its weights in as any pass does: no read-ahead for trees",
    kv_seq_us = "llama_kv_cache_seq_cp gives a leaf's sequence the shared cells by tagging them (no copy of the context): its bookkeeping is not charged",
    kv_shared = "separate draft and target contexts, each with its own KV cache (two llama_context)",
    contention_compute = "the draft and the target never compute at once: they queue on the same cores (sim/hw/sim_hw.h 'Two runtimes'), so the wait is the cost and no sharing slowdown applies",
    contention_load = "EdgeLLM §III-D (Fig. 13): a draft running in parallel slowed the target's parameter loading 1.05-1.09x (midpoint 1.07), Jetson TX2",
    mem_upper_bound = "EdgeLLM §III-D: the two models barely disturb each other unless memory use exceeds 90%",
    spec_prefetch_layers = "the runtime has one way to read, the page faults: the alternative runtime is the same",
    spec_queue_depth = "as queue_depth: one fault in flight per compute thread",
  },
}
