// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/capture/gc_probes: which symbols of a V8 runtime get
 * a GC probe.  The names are the real ones of workerd 2026-11-17 (V8 15.8)
 * and node v20.20.2 (V8 11.3, libstdc++), as nm prints them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "user/capture/gc_probes.h"

static void test_sites(void **state)
{
	(void)state;
	/* workerd, node: the signature changed, the name did not */
	assert_int_equal(gc_probes__site_of("_ZN2v88internal4Heap14CollectGarbageENS0_15Allocation"
					    "SpaceENS0_23GarbageCollectionReasonENS_15GCCallbackFlags"
					    "ENS_4base11StrongAliasINS0_24PerformHeapLimitCheckTagEbEE"
					    "NS6_INS0_37PerformIneffectiveMarkCompactCheckTagEbEE"),
			 ISOPROF_GC_SITE_COLLECT);
	assert_int_equal(gc_probes__site_of("_ZN2v88internal4Heap14CollectGarbageENS0_15Allocation"
					    "SpaceENS0_23GarbageCollectionReasonENS_15GCCallbackFlagsE"),
			 ISOPROF_GC_SITE_COLLECT);
	assert_int_equal(gc_probes__site_of("_ZN2v88platform19NewDefaultJobHandleEPNS_8Platform"
					    "ENS_12TaskPriorityENSt3__110unique_ptrINS_7JobTaskENS3_"
					    "14default_deleteIS5_EEEEm"),
			 ISOPROF_GC_SITE_JOB_POST);
	/* jobs inside namespace v8 (S_ = v8), in cppgc, and workerd's wrapper */
	assert_int_equal(gc_probes__site_of("_ZN2v88internal18ScavengerCollector7JobTask3RunEPNS_"
					    "11JobDelegateE"),
			 ISOPROF_GC_SITE_JOB_RUN);
	assert_int_equal(gc_probes__site_of("_ZN2v88internal17ConcurrentMarking12JobTaskMajor3Run"
					    "EPNS_11JobDelegateE"),
			 ISOPROF_GC_SITE_JOB_RUN);
	assert_int_equal(gc_probes__site_of("_ZN5cppgc8internal19WeakCallbackJobTask3RunEPN2v811"
					    "JobDelegateE"),
			 ISOPROF_GC_SITE_JOB_RUN);
	assert_int_equal(gc_probes__site_of("_ZN7workerd3jsg17V8PlatformWrapper14JobTaskWrapper3Run"
					    "EPN2v811JobDelegateE"),
			 ISOPROF_GC_SITE_JOB_RUN);
	/* V8's observable pause: one cookie per signature (node 20's V8 11, workerd's V8 15) */
	assert_int_equal(gc_probes__site_of("_ZN2v88internal8GCTracer20StartObservablePauseEv"),
			 ISOPROF_GC_SITE_PAUSE_START);
	assert_int_equal(gc_probes__site_of("_ZN2v88internal8GCTracer19StopObservablePauseEv"),
			 ISOPROF_GC_SITE_PAUSE_STOP);
	assert_int_equal(gc_probes__site_of("_ZN2v88internal8GCTracer20StartObservablePause"
					    "ENS_4base9TimeTicksE"),
			 ISOPROF_GC_SITE_PAUSE_START_TICKS);
	assert_int_equal(gc_probes__site_of("_ZN2v88internal8GCTracer19StopObservablePause"
					    "ENS0_16GarbageCollectorENS_4base9TimeTicksE"),
			 ISOPROF_GC_SITE_PAUSE_STOP_TICKS);
	/* a signature not known: where its time is, is not guessed */
	assert_int_equal(gc_probes__site_of("_ZN2v88internal8GCTracer20StartObservablePause"
					    "Ed"), 0);
	assert_int_equal(gc_probes__site_of("_ZN2v88internal8GCTracer19StopObservablePause"
					    "ENS0_16GarbageCollectorE"), 0);
	/* nor the lambdas and scoped events inside StopObservablePause */
	assert_int_equal(gc_probes__site_of("_ZZN2v88internal8GCTracer19StopObservablePause"
					    "ENS0_16GarbageCollectorENS_4base9TimeTicksEENK3$_1clEv"),
			 0);
	/* not probed: the lambda inside CollectGarbage, a thunk, a local static, others */
	assert_int_equal(gc_probes__site_of("_ZZN2v88internal4Heap14CollectGarbageENS0_15Allocation"
					    "SpaceEENK3$_0clEv"), 0);
	assert_int_equal(gc_probes__site_of("_ZThn8_N7workerd3jsg17V8PlatformWrapper14JobTask"
					    "Wrapper3RunEPN2v811JobDelegateE"), 0);
	assert_int_equal(gc_probes__site_of("_ZN2v88internal7CppHeap14CollectGarbageEN5cppgc8"
					    "internal8GCConfigE"), 0);
	assert_int_equal(gc_probes__site_of("_ZN2v88internal4Heap24PerformGarbageCollectionENS0_"
					    "16GarbageCollectorENS0_23GarbageCollectionReasonEPKc"), 0);
	assert_int_equal(gc_probes__site_of("_ZN2v88internal14DefaultJobTask3RunEv"), 0);
	assert_int_equal(gc_probes__site_of(""), 0);
	assert_int_equal(gc_probes__site_of(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sites),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
