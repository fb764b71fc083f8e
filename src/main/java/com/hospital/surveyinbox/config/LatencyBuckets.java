package com.hospital.surveyinbox.config;

import java.time.Duration;

/**
 * The histogram buckets of the service's latency timers, exported to Prometheus as {@code _bucket} series
 * ({@code le} in seconds) instead of per-pod percentiles, which cannot be aggregated across pods: a p99 over
 * the whole deployment is {@code histogram_quantile(0.99, sum by (le) (rate(…_bucket[5m])))}. A fixed, short
 * list keeps the series bounded. {@link #RECEPTION_SLO} is a boundary of {@link #RECEPTION}: the reception
 * SLO's burn-rate alerts read that bucket ({@code k8s/monitoring/prometheusrule.yaml}).
 */
public final class LatencyBuckets {

    /** Reception SLO: an answer within 100 ms (2xx/4xx), for 99.5 % of receptions. */
    public static final Duration RECEPTION_SLO = Duration.ofMillis(100);

    /**
     * Reception answer and group-insert commit wait: 1 ms … 2 min. Past 5 s: a 503 comes after the store timeout plus
     * the pool's wait and socket timeout (about 11 s), a synchronous registration (the rollback toggle) in up to
     * 2 minutes; without those buckets an incident's p99 showed a flat 5 s.
     */
    public static final Duration[] RECEPTION = millis(1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 120000);

    /** Downstream calls (the consent lookup takes ~1 s; timeouts are a few seconds): 10 ms … 10 s. */
    public static final Duration[] DOWNSTREAM = millis(10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000);

    private LatencyBuckets() {
    }

    private static Duration[] millis(long... values) {
        Duration[] out = new Duration[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = Duration.ofMillis(values[i]);
        }
        return out;
    }
}
