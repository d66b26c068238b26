// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/capture/alloc_probes: which symbols of a runtime get
 * an allocation probe, and where the probe reads the size.  The names are
 * the real ones of workerd 2026-11-17 (V8 15.8, tcmalloc) and node
 * v20.20.2 (V8 11.3), as nm prints them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "user/capture/alloc_probes.h"

static void test_sites(void **state)
{
	(void)state;
	/* V8's sampling heap profiler, workerd and node alike: size in the third argument */
	assert_int_equal(alloc_probes__cookie_of("_ZN2v88internal20SamplingHeapProfiler12SampleObjectEmm"),
			 ISOPROF_ALLOC_COOKIE(ISOPROF_ALLOC_SITE_V8, 3));
	/* tcmalloc, two of its 49 policies: requested_size is the second argument in both */
	assert_int_equal(
		alloc_probes__cookie_of(
			"_ZN8tcmalloc17tcmalloc_internal19SampleifyAllocationINS0_14TCMallocPolicyINS0_12"
			"CppOomPolicyENS0_13AlignAsPolicyENS0_24AllocationAccessAsPolicyENS0_17Invoke"
			"HooksPolicyENS0_21IsSizeReturningPolicyENS0_24LocalNumaPartitionPolicyENS0_22"
			"DefaultPartitionPolicyEEEEE13__sized_ptr_tRNS0_6StaticET_mmmPNS0_4SpanE"),
		ISOPROF_ALLOC_COOKIE(ISOPROF_ALLOC_SITE_NATIVE, 2));
	assert_int_equal(
		alloc_probes__cookie_of(
			"_ZN8tcmalloc17tcmalloc_internal19SampleifyAllocationINS0_14TCMallocPolicyINS0_15"
			"MallocOomPolicyENS0_17MallocAlignPolicyENS0_25AllocationAccessHotPolicyENS0_17"
			"InvokeHooksPolicyENS0_22NonSizeReturningPolicyENS0_24LocalNumaPartitionPolicy"
			"ENS0_22DefaultPartitionPolicyEEEEE13__sized_ptr_tRNS0_6StaticET_mmmPNS0_4SpanE"),
		ISOPROF_ALLOC_COOKIE(ISOPROF_ALLOC_SITE_NATIVE, 2));
}

static void test_not_sites(void **state)
{
	(void)state;
	/* the observer that calls SampleObject, tcmalloc's sample bookkeeping, nothing */
	assert_int_equal(alloc_probes__cookie_of("_ZN2v88internal20SamplingHeapProfiler8Observer4"
						 "StepEimm"), 0);
	assert_int_equal(alloc_probes__cookie_of("_ZN8tcmalloc17tcmalloc_internal15PeakHeapTracker"
						 "15MaybeSaveSampleEv"), 0);
	assert_int_equal(alloc_probes__cookie_of("malloc"), 0);
	assert_int_equal(alloc_probes__cookie_of(""), 0);
	assert_int_equal(alloc_probes__cookie_of(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sites),
		cmocka_unit_test(test_not_sites),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
