// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * crosscheck_noise: how far apart two profiles of one distribution land by
 * sampling alone, so that the verdict can tell a difference from noise
 * (crosscheck_int.h has the contract, docs/crosscheck.md the method).
 *
 * Everything here is a pure function of count tables.  The resampling uses
 * its own fixed-seed generator so that one pair of profiles always gets the
 * same report.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "user/v8/crosscheck_int.h"

/* ---- A small reproducible generator ---------------------------------------- */

/* splitmix64: one 64-bit state, passes BigCrush; plenty for resampling. */
struct cc_rng {
	uint64_t state;
};

static uint64_t rng__next(struct cc_rng *g)
{
	uint64_t z = (g->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1): never 0, so that log() below is finite. */
static double rng__uniform(struct cc_rng *g)
{
	return ((double)(rng__next(g) >> 11) + 0.5) * 0x1.0p-53;
}

static double rng__normal(struct cc_rng *g)
{
	double u = rng__uniform(g), v = rng__uniform(g);

	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/*
 * How many of a function's k pooled samples land in a pile of m dealt from
 * n (hypergeometric).  The pile and the function are taken as the smaller
 * halves (by symmetry), so the variance is at least a quarter of the mean:
 * a handful of samples are dealt one by one (most functions of a flat
 * profile have one or two), up to a mean of 30 by inversion, and above it
 * a rounded normal, close there and O(1) at any size.
 */
static uint64_t hypergeometric(struct cc_rng *g, uint64_t n, uint64_t k, uint64_t m)
{
	double mean, var, f, u, x;
	uint64_t got = 0, lo, hi;

	if (!k || !m)
		return 0;
	if (k > n / 2)
		return m - hypergeometric(g, n, n - k, m);
	if (m > n / 2)
		return k - hypergeometric(g, n, k, n - m);
	if (k <= 16) {
		for (uint64_t j = 0; j < k; j++)
			if (rng__uniform(g) * (double)(n - j) < (double)(m - got))
				got++;
		return got;
	}
	lo = 0;
	hi = k < m ? k : m;
	mean = (double)m * (double)k / (double)n;
	if (mean >= 30) {
		var = mean * (1 - (double)k / (double)n) * (double)(n - m) / (double)(n - 1);
		x = floor(mean + sqrt(var) * rng__normal(g) + 0.5);
		return x <= (double)lo ? lo : x >= (double)hi ? hi : (uint64_t)x;
	}
	/* P(0) = C(n - k, m) / C(n, m); then P(x + 1) / P(x) */
	f = exp(lgamma((double)(n - k) + 1) - lgamma((double)(n - k - m) + 1) -
		lgamma((double)n + 1) + lgamma((double)(n - m) + 1));
	u = rng__uniform(g);
	/* f reaches 0 in the far tail when rounding left u above the total */
	while (u > f && got < hi && f > 0) {
		u -= f;
		f *= (double)(k - got) * (double)(m - got) /
		     ((double)(got + 1) * (double)(n - k - m + got + 1));
		got++;
	}
	return got;
}

/* ---- The noise floor --------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of v[0..n) (sorted here), the nearest-rank way. */
static double quantile(double *v, size_t n, double q)
{
	size_t i = (size_t)ceil(q * (double)n);

	qsort(v, n, sizeof(*v), cmp_double);
	return v[i ? i - 1 : 0];
}

/* A uniform index below n (Lemire's multiply-shift; its bias is below 2^-32 here). */
static uint64_t rng__below(struct cc_rng *g, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng__next(g) * n) >> 64);
}

/* The quantiles of the resampled distances d (and e[side], one side vs the pooled shares). */
static void summarize(double *d, double *e[2], struct cc_noise *out)
{
	out->resamples = CC_NOISE_RESAMPLES;
	out->median = quantile(d, CC_NOISE_RESAMPLES, 0.5);
	out->floor = quantile(d, CC_NOISE_RESAMPLES, CC_NOISE_QUANTILE);
	for (int s = 0; s < 2; s++)
		out->side_floor[s] = quantile(e[s], CC_NOISE_RESAMPLES, CC_NOISE_QUANTILE);
}

/*
 * The permutation test's resamples: both sides' samples pooled, dealt out
 * again at random into two piles of the sides' sizes.  Exact under "one
 * distribution", whatever its shape: every pooled sample lands on one side
 * or the other, so a function seen once adds its 1/n to every resample as
 * it does to the observed distance.  (Drawing with replacement from the
 * pooled shares, a bootstrap, leaves out a third of those functions each
 * time: on a flat profile its floor fell below the distance between two
 * halves of one sample.)  Here by shuffling the pool itself.
 */
static int shuffle(const uint64_t *const counts[2], size_t k, const uint64_t total[2],
		   double *d, double *e[2])
{
	uint64_t n = total[0] + total[1], m = total[0] < total[1] ? total[0] : total[1];
	int small = total[0] < total[1] ? 0 : 1;	/* the pile dealt out */
	uint32_t *pool = malloc(n * sizeof(*pool));
	uint64_t *x = calloc(k, sizeof(*x));
	struct cc_rng g = { CC_NOISE_SEED };
	size_t at = 0;

	if (!pool || !x) {
		free(pool);
		free(x);
		return -ENOMEM;
	}
	for (size_t i = 0; i < k; i++)
		for (uint64_t j = 0; j < counts[0][i] + counts[1][i]; j++)
			pool[at++] = (uint32_t)i;
	for (size_t b = 0; b < CC_NOISE_RESAMPLES; b++) {
		double dist = 0, err[2] = { 0, 0 };

		/*
		 * The first m of a partial Fisher-Yates shuffle are a uniform
		 * m-subset whatever order the pool was left in: no reset needed.
		 */
		for (uint64_t j = 0; j < m; j++) {
			uint64_t r = j + rng__below(&g, n - j);
			uint32_t t = pool[j];

			pool[j] = pool[r];
			pool[r] = t;
			x[pool[j]]++;
		}
		for (size_t i = 0; i < k; i++) {
			uint64_t pooled = counts[0][i] + counts[1][i];
			double pi = (double)pooled / (double)n, share[2];

			share[small] = (double)x[i] / (double)total[small];
			share[!small] = (double)(pooled - x[i]) / (double)total[!small];
			dist += fabs(share[0] - share[1]);
			err[0] += fabs(share[0] - pi);
			err[1] += fabs(share[1] - pi);
			x[i] = 0;
		}
		d[b] = dist / 2;
		e[0][b] = err[0] / 2;
		e[1][b] = err[1] / 2;
	}
	free(pool);
	free(x);
	return 0;
}

/*
 * The same resamples without holding the pool: the pile's share of each
 * function in turn, given what is left to deal.  O(functions) a resample
 * at any number of samples.
 */
static void deal_by_function(const uint64_t *const counts[2], size_t k, const uint64_t total[2],
			     double *d, double *e[2])
{
	uint64_t n = total[0] + total[1];
	int small = total[0] < total[1] ? 0 : 1;
	struct cc_rng g = { CC_NOISE_SEED };

	for (size_t b = 0; b < CC_NOISE_RESAMPLES; b++) {
		uint64_t left = n, pile = total[small];
		double dist = 0, err[2] = { 0, 0 };

		for (size_t i = 0; i < k; i++) {
			uint64_t pooled = counts[0][i] + counts[1][i];
			uint64_t x = hypergeometric(&g, left, pooled, pile);
			double pi = (double)pooled / (double)n, share[2];

			left -= pooled;
			pile -= x;
			share[small] = (double)x / (double)total[small];
			share[!small] = (double)(pooled - x) / (double)total[!small];
			dist += fabs(share[0] - share[1]);
			err[0] += fabs(share[0] - pi);
			err[1] += fabs(share[1] - pi);
		}
		d[b] = dist / 2;
		e[0][b] = err[0] / 2;
		e[1][b] = err[1] / 2;
	}
}

int cc_noise__estimate_by(const uint64_t *const counts[2], size_t k, enum cc_noise_method how,
			  struct cc_noise *out)
{
	uint64_t total[2] = { 0, 0 }, m;
	double *d, *e[2];
	int err = 0;

	out->floor = out->median = out->side_floor[0] = out->side_floor[1] = NAN;
	out->resamples = 0;
	for (size_t i = 0; i < k; i++)
		for (int s = 0; s < 2; s++)
			if (__builtin_add_overflow(total[s], counts[s][i], &total[s]))
				return 0;	/* more than 2^64 samples: a hostile file */
	if (!k || !total[0] || !total[1] || total[0] > UINT64_MAX - total[1])
		return 0;
	m = total[0] < total[1] ? total[0] : total[1];
	/*
	 * A shuffle costs a random access per sample of the smaller side, the
	 * other way some 4x that per function: whichever is less (measured
	 * on 20 to 20,000 functions and 3,000 to 100,000 samples a side).
	 */
	if (how == CC_NOISE_AUTO)
		how = total[0] + total[1] <= CC_NOISE_MAX_POOL && m / 4 <= k &&
		      k <= UINT32_MAX ? CC_NOISE_SHUFFLE : CC_NOISE_BY_FUNCTION;
	if (how == CC_NOISE_SHUFFLE && (total[0] + total[1] > CC_NOISE_MAX_POOL || k > UINT32_MAX))
		return -E2BIG;
	d = malloc(3 * CC_NOISE_RESAMPLES * sizeof(*d));
	if (!d)
		return -ENOMEM;
	e[0] = d + CC_NOISE_RESAMPLES;
	e[1] = e[0] + CC_NOISE_RESAMPLES;
	if (how == CC_NOISE_SHUFFLE)
		err = shuffle(counts, k, total, d, e);
	else
		deal_by_function(counts, k, total, d, e);
	if (!err)
		summarize(d, e, out);
	free(d);
	return err;
}

int cc_noise__estimate(const uint64_t *const counts[2], size_t k, struct cc_noise *out)
{
	return cc_noise__estimate_by(counts, k, CC_NOISE_AUTO, out);
}

/* ---- Tests on single functions ----------------------------------------------- */

/* P(X >= a) for X ~ Binomial(a + b, 1/2): how surprising a's lead is if the two tie. */
static double lead_p_value(uint64_t a, uint64_t b)
{
	double m = (double)a + (double)b, sum = 0;

	if (a <= b)
		return 1;
	if (m > 10000) {
		/* normal approximation with continuity correction: exact enough here */
		double z = ((double)a - 0.5 - m / 2) / sqrt(m / 4);

		return 0.5 * erfc(z / M_SQRT2);
	}
	for (double j = (double)a; j <= m; j++) {
		double term = exp(lgamma(m + 1) - lgamma(j + 1) - lgamma(m - j + 1) - m * M_LN2);

		sum += term;
		if (term < sum * 1e-17)
			break;
	}
	return sum;
}

bool cc_noise__ahead(uint64_t a, uint64_t b)
{
	return lead_p_value(a, b) < CROSSCHECK_ALPHA;
}

/* z with P(Z > z) = tail for a standard normal Z, by bisection over erfc. */
static double normal_quantile_upper(double tail)
{
	double lo = 0, hi = 40;

	if (tail >= 0.5)
		return 0;
	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;

		if (0.5 * erfc(mid / M_SQRT2) > tail)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double cc_noise__z(size_t m)
{
	return normal_quantile_upper(CROSSCHECK_ALPHA / 2 / (double)(m ? m : 1));
}

void cc_noise__diff_interval(uint64_t c0, uint64_t n0, uint64_t c1, uint64_t n1, double z,
			     double *lo, double *hi)
{
	/*
	 * Agresti and Caffo: one sample of each kind added to each side keeps
	 * the interval honest where a side has few or no samples of the
	 * function, which is most of a flat profile's rows.
	 */
	double p0 = ((double)c0 + 1) / ((double)n0 + 2), p1 = ((double)c1 + 1) / ((double)n1 + 2);
	double se = sqrt(p0 * (1 - p0) / ((double)n0 + 2) + p1 * (1 - p1) / ((double)n1 + 2));

	*lo = p0 - p1 - z * se;
	*hi = p0 - p1 + z * se;
}
