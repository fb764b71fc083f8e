package com.hospital.surveyinbox.ops;

import com.hospital.surveyinbox.inbox.InboxStatus;
import com.hospital.surveyinbox.processing.DownstreamCircuits;
import com.hospital.surveyinbox.processing.ProcessingWorkers;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Operator stats and history (CONTRACT §4): reads this pod's circuits, workers and requeue room beside the
 * database's counts. The list and one row's detail are routes ({@code routes/inbox-ops.camel.yaml}, jpa:), the
 * requeues too ({@code routes/inbox-requeue.camel.yaml}).
 */

@RestController
@RequestMapping("/ops/inbox")
public class InboxOpsController {

    private final InboxRowRepository rows;
    private final InboxHistory history;
    private final PacedRepublisher paced;
    private final DownstreamCircuits circuits;
    private final ProcessingWorkers workers;

    public InboxOpsController(InboxRowRepository rows, InboxHistory history, PacedRepublisher paced,
                              DownstreamCircuits circuits, ProcessingWorkers workers) {
        this.rows = rows;
        this.history = history;
        this.paced = paced;
        this.circuits = circuits;
        this.workers = workers;
    }

    @GetMapping("/stats")
    public Map<String, Object> stats() {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (InboxStatus status : InboxStatus.values()) {
            counts.put(status.name(), 0L);
        }
        for (Object[] row : rows.countByStatus()) {
            counts.put((String) row[0], ((Number) row[1]).longValue());
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("counts", counts);
        body.put("oldestPendingAgeSeconds", (long) Math.floor(rows.oldestPendingAgeSeconds()));
        // this pod's view (each pod keeps its own circuits and workers); the metrics have every pod's
        Map<String, String> circuitStates = new LinkedHashMap<>();
        for (String downstream : DownstreamCircuits.DOWNSTREAMS) {
            circuitStates.put(downstream, circuits.state(downstream).name());
        }
        body.put("circuits", circuitStates);
        body.put("workers", Map.of("busy", workers.busy(), "size", workers.getMaximumPoolSize()));
        body.put("requeuePending", paced.pending());
        return body;
    }

    static final int MAX_HISTORY_MINUTES = 1440;

    /** Per minute, the rows received and the attempts ended COMPLETED / FAILED / DEAD (the console's chart). */
    @GetMapping("/history")
    public ResponseEntity<?> history(@RequestParam(required = false) Integer minutes) {
        int span = minutes == null ? 60 : minutes;
        if (span < 1 || span > MAX_HISTORY_MINUTES) {
            return ResponseEntity.badRequest().body(Map.of("error", "minutes must be 1.." + MAX_HISTORY_MINUTES));
        }
        return ResponseEntity.ok(Map.of("minutes", history.perMinute(span)));
    }
}
