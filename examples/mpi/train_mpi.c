/*
 * Data-parallel training on MPI (docs/distributed.md): the trainers' loop
 * (examples/common/trainer.h) with the global batch cut into --shards
 * shards spread over the ranks (examples/common/dist.h). Every rank draws
 * the same global batch, computes its shards' gradients with their global
 * row and chain numbers (EBM_ESTIMATOR_ROW_OFFSET, _CHAIN_OFFSET), and the
 * ranks sum them exactly in fixed point, so that every rank applies the same
 * update and a run's results depend on --shards, never on the number of
 * ranks: with the same seed, 1, 2 or 3 ranks give the same meeting times,
 * chains and parameters, bit for bit. Rank 0 writes the progress, train.csv,
 * the checkpoints (with every rank's PCD chains) and the model, and
 * evaluates; a checkpoint resumes on any number of ranks.
 *
 * Build: make examples-mpi (Debian: apt-get install openmpi-bin
 * libopenmpi-dev); the library itself never links MPI. Run:
 *     mpirun -np 2 build/examples/train_mpi --estimator ucd --data bas --steps 200
 *
 * Options: the trainers' (--help), with --batch the GLOBAL batch, plus
 * --estimator ucd|ucd-lmi|pcd|cd (the defaults of train_ucd for ucd, of
 * train_ucd_lmi for the others) and --shards N (default 12, at least the
 * number of ranks, at most the batch). Every rank reads the data and the
 * --resume checkpoint itself: on several machines, give each the same files
 * (a shared directory, or copies).
 */
#include <ebm.h>
#include <mpi.h>

#include "../common/trainer.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* MPI counts are ints: long arrays go in pieces. */
enum { PIECE = 1 << 28 };

/* x[0..n) reduced by op over the ranks, in place. */
static int allreduce(void *ctx, void *x, int64_t n, MPI_Datatype type, size_t size, MPI_Op op)
{
    for (int64_t at = 0; at < n; at += PIECE) {
        const int count = (int)(n - at < PIECE ? n - at : PIECE);
        if (MPI_Allreduce(MPI_IN_PLACE, (char *)x + (size_t)at * size, count, type, op,
                          *(MPI_Comm *)ctx) != MPI_SUCCESS) {
            return 1;
        }
    }
    return 0;
}

static int sum_i64(void *ctx, int64_t *x, int64_t n)
{
    return allreduce(ctx, x, n, MPI_INT64_T, sizeof *x, MPI_SUM);
}

static int max_f64(void *ctx, double *x, int64_t n)
{
    return allreduce(ctx, x, n, MPI_DOUBLE, sizeof *x, MPI_MAX);
}

static int bcast(void *ctx, void *bytes, int64_t n, int root)
{
    for (int64_t at = 0; at < n; at += PIECE) {
        const int count = (int)(n - at < PIECE ? n - at : PIECE);
        if (MPI_Bcast((char *)bytes + at, count, MPI_BYTE, root, *(MPI_Comm *)ctx) != MPI_SUCCESS) {
            return 1;
        }
    }
    return 0;
}

static const struct {
    const char *name, *title;
    int method;
} estimators[] = {{"ucd", "UCD", EBM_ESTIMATOR_UCD},
                  {"ucd-lmi", "UCD-LMI", EBM_ESTIMATOR_UCD_LMI},
                  {"pcd", "PCD", EBM_ESTIMATOR_PCD},
                  {"cd", "CD", EBM_ESTIMATOR_CD}};
enum { N_ESTIMATORS = sizeof estimators / sizeof estimators[0] };

/* Take --estimator NAME (or --estimator=NAME) out of argv; returns the
 * index into estimators (0, ucd, if absent), or -1 after a message. */
static int take_estimator(int *argc, char **argv, int rank)
{
    const char *name = NULL;
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--estimator") == 0 && i + 1 < *argc) {
            name = argv[++i];
        } else if (strncmp(argv[i], "--estimator=", 12) == 0) {
            name = argv[i] + 12;
        } else if (strcmp(argv[i], "--estimator") == 0) {
            name = "";
        } else {
            argv[out++] = argv[i];
        }
    }
    *argc = out;
    argv[out] = NULL;
    if (name == NULL) {
        return 0;
    }
    for (int k = 0; k < N_ESTIMATORS; k++) {
        if (strcmp(name, estimators[k].name) == 0) {
            return k;
        }
    }
    if (rank == 0) {
        fprintf(stderr, "train_mpi: bad value '%s' for --estimator: expected one of ucd, ucd-lmi, "
                        "pcd, cd\n", name);
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "train_mpi: MPI_Init failed\n");
        return 1;
    }
    MPI_Comm world = MPI_COMM_WORLD;
    int rank = 0, size = 1;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    if (rank != 0 && freopen("/dev/null", "w", stdout) == NULL) {
        fprintf(stderr, "train_mpi: rank %d: cannot silence stdout\n", rank);
    }
    const int k = take_estimator(&argc, argv, rank);
    int status = 2;
    if (k >= 0) {
        const dist_comm comm = {rank, size, &world, sum_i64, max_f64, bcast};
        trainer_config c;
        trainer_defaults(&c, estimators[k].method, "train_mpi", estimators[k].title);
        c.comm = &comm;
        c.shards = 12;
        status = trainer_main(&c, argc, argv);
    }
    MPI_Finalize();
    return status;
}
