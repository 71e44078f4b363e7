# cdtau (Qiu et al. 2020; its own C++ through its R functions) on
# bench/ucd_bas.c's capped workload (ucd_bas_cap100): UCD training of a
# binary RBM 16-16 on the 32 rows of 4x4 bars-and-stripes (built as in
# cdtau's own rbm_cd example), full batch (batch_size 32), 1000 chains,
# lr 0.1, min_mcmc 1, max_mcmc 100, W, b, c N(0, 0.1^2) (its default start),
# no log-likelihood evaluation (eval_freq 1 only records tau), nthread = BENCH_THREADS. The time is the mean
# over the whole run of BENCH_BAS_ITERS (10,000) iterations, as ucd_bas's;
# the run is made of calls of 1000 iterations each (rbm_ucd with the previous
# call's w, b, c: its warm start), so that the first and last 1000 can be
# given as ucd_bas gives them. Peak RSS: VmHWM of /proc/self/status.
# usage: Rscript peer_ucd_bas.R   (with R_LIBS naming the library holding cdtau)
suppressPackageStartupMessages(library(cdtau))

threads <- as.integer(Sys.getenv("BENCH_THREADS", "2"))
iters <- as.integer(Sys.getenv("BENCH_BAS_ITERS", "10000"))
commit <- Sys.getenv("PEER_CDTAU_COMMIT", "unknown")
window <- min(1000L, iters)

d <- 4
m <- n <- d^2
N <- 2^d
dat <- matrix(0, 2 * N, m)
for (i in 1:N) {
    bits <- as.integer(rev(intToBits(i - 1)[1:d]))
    mat <- tcrossprod(bits, rep(1, d))
    dat[2 * i - 1, ] <- as.numeric(mat)
    dat[2 * i, ] <- as.numeric(t(mat))
}
tdat <- t(dat)

cat(sprintf(paste0("peer_ucd_bas_cap100: cdtau %s rbm_ucd (C++, Eigen), RBM %d-%d on 4x4 BAS, ",
                   "batch %d, 1000 chains, lr 0.1, max_mcmc 100; mean over %d iterations ",
                   "(calls of %d)\n"), substr(commit, 1, 12), m, n, 2 * N, iters, window))

set.seed(123)
w <- b <- cc <- NULL
chunk_s <- c()
tau <- c()
done <- 0L
while (done < iters) {
    k <- min(window, iters - done)
    t0 <- proc.time()[["elapsed"]]
    fit <- rbm_ucd(m, n, tdat, b0 = b, c0 = cc, w0 = w, batch_size = 2 * N, lr = 0.1,
                   niter = k, min_mcmc = 1, max_mcmc = 100, nchain = 1000,
                   eval_loglik = FALSE, eval_freq = 1, nthread = threads)
    chunk_s <- c(chunk_s, proc.time()[["elapsed"]] - t0)
    tau <- c(tau, fit$tau)
    w <- fit$w; b <- fit$b; cc <- fit$c
    done <- done + k
}

ms <- 1e3 * sum(chunk_s) / iters
first <- 1e3 * chunk_s[1] / window
last <- 1e3 * chunk_s[length(chunk_s)] / window
status <- readLines("/proc/self/status")
hwm <- as.numeric(gsub("[^0-9]", "", grep("^VmHWM", status, value = TRUE))) / 1024
ll <- loglik_rbm(w, b, cc, tdat)
cat(sprintf(paste0("%-20s cdtau (C++, Eigen)  threads %-7d %10.3f ms/step  RSS %.0f MiB  | ",
                   "UCD BAS 16-16 capped at 100; first 1000: %.3f, last 1000: %.3f ms, ",
                   "mean tau %.2f, loglik %.2f\n"),
            "peer_ucd_bas_cap100", threads, ms, hwm, first, last, mean(tau), ll))
cat(sprintf(paste0("{\"bench\": \"peer_ucd_bas_cap100\", \"peer\": \"cdtau (C++, Eigen)\", ",
                   "\"threads\": %d, \"ms_per_step\": %.4f, \"peak_rss_mib\": %.1f, ",
                   "\"iters\": %d, \"first_ms\": %.4f, \"last_ms\": %.4f, \"tau_mean\": %.4f, ",
                   "\"loglik\": %.4f, \"commit\": \"%s\"}\n"),
            threads, ms, hwm, iters, first, last, mean(tau), ll, commit))
