package com.hospital.surveyinbox.retention;

import com.hospital.surveyinbox.config.AdapterProperties;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Steps of {@code routes/inbox-retention.camel.yaml}: the named parameters of
 * {@code sql/redact-closed-payloads.sql} ({@link #params}) and the counting of what one batch redacted
 * ({@link #counted}). The route repeats the statement while a whole batch comes back.
 */
@Component("retentionSweep")
public class RetentionSweep {

    private static final Logger log = LoggerFactory.getLogger(RetentionSweep.class);

    private final AdapterProperties properties;
    private final MeterRegistry meters;

    public RetentionSweep(AdapterProperties properties, MeterRegistry meters) {
        this.properties = properties;
        this.meters = meters;
    }

    /** From {@code adapter.retention.*}: ages in milliseconds, the batch size and the batches a run may take. */
    public Map<String, Object> params() {
        AdapterProperties.Retention retention = properties.getRetention();
        Map<String, Object> params = new HashMap<>();
        params.put("completedMillis", retention.getCompleted().toMillis());
        params.put("deadMillis", retention.getDead().toMillis());
        params.put("batch", retention.getBatchSize());
        params.put("maxBatches", retention.getMaxBatches());
        params.put("keepFinishedMillis", retention.getKeepFinished().toMillis());
        params.put("keepResendableMillis", retention.getKeepResendable().toMillis());
        return params;
    }

    /**
     * The same parameters with half the batch (at least one row): a batch that outlasted the statement bound (a slow
     * database, a night of backups and vacuum) is tried again smaller for the rest of the run, instead of ending every
     * run at its first batch and leaving patient data past its retention night after night.
     */
    public Map<String, Object> halved(Map<String, Object> params) {
        Map<String, Object> smaller = new HashMap<>(params);
        smaller.put("batch", Math.max(1, ((Number) params.get("batch")).intValue() / 2));
        return smaller;
    }

    /** Counts one batch's redacted rows by status; returns how many there were. */
    public int counted(List<Map<String, Object>> redacted) {
        return count(redacted, "adapter.retention.redacted", "payload removed from");
    }

    /** Counts one batch's deleted rows by status; returns how many there were. */
    public int deleted(List<Map<String, Object>> deleted) {
        return count(deleted, "adapter.retention.deleted", "deleted finished");
    }

    private int count(List<Map<String, Object>> rows, String meter, String what) {
        long completed = rows.stream().filter(r -> "COMPLETED".equals(r.get("status"))).count();
        long dead = rows.size() - completed;
        meters.counter(meter, "status", "COMPLETED").increment(completed);
        meters.counter(meter, "status", "DEAD").increment(dead);
        if (!rows.isEmpty()) {
            log.info("Retention: {} {} COMPLETED and {} DEAD rows", what, completed, dead);
        }
        return rows.size();
    }
}
