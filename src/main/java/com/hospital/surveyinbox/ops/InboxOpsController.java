package com.hospital.surveyinbox.ops;

import com.hospital.surveyinbox.inbox.InboxStatus;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.data.domain.PageRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import com.hospital.surveyinbox.inbox.InboxEventPublisher;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.RequeueResult;
import java.security.Principal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Operator reads and requeue (CONTRACT §4). Served by Spring MVC rather than a route: these are queries over the
 * ledger, not part of the integration flow, and the route folder stays about moving messages.
 */
@RestController
@RequestMapping("/ops/inbox")
public class InboxOpsController {

    private static final Logger log = LoggerFactory.getLogger(InboxOpsController.class);
    static final int DEFAULT_LIMIT = 50;
    static final int MAX_LIMIT = 500;

    private final InboxRowRepository rows;
    private final InboxHistory history;
    private final InboxStore store;
    private final InboxEventPublisher publisher;

    public InboxOpsController(InboxRowRepository rows, InboxHistory history, InboxStore store,
                              InboxEventPublisher publisher) {
        this.rows = rows;
        this.history = history;
        this.store = store;
        this.publisher = publisher;
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

    @GetMapping
    public ResponseEntity<?> list(@RequestParam(required = false) String status,
                                  @RequestParam(required = false) String srvyDrawupNo,
                                  @RequestParam(required = false) Integer limit) {
        if (status != null && !isStatus(status)) {
            return ResponseEntity.badRequest().body(Map.of("error", "unknown status; one of " + List.of(InboxStatus.values())));
        }
        int size = limit == null ? DEFAULT_LIMIT : limit;
        if (size < 1 || size > MAX_LIMIT) {
            return ResponseEntity.badRequest().body(Map.of("error", "limit must be 1.." + MAX_LIMIT));
        }
        List<InboxRowView> result = rows.search(status, blankToNull(srvyDrawupNo), PageRequest.of(0, size))
                .stream().map(InboxRowView::of).toList();
        return ResponseEntity.ok(result);
    }

    @GetMapping("/{inboxId}")
    public ResponseEntity<?> get(@PathVariable String inboxId) {
        Long id = parseId(inboxId);
        if (id == null) {
            return ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("error", "no such inbox row"));
        }
        return rows.findById(id).<ResponseEntity<?>>map(row -> ResponseEntity.ok(
                        InboxRowView.of(row, history.attempts(id), history.audit(id))))
                .orElseGet(() -> ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("error", "no such inbox row")));
    }

    /**
     * DEAD or FAILED -> RECEIVED with attempts reset, audited with the operator's name, then the event is
     * republished (if that publish fails the redelivery job republishes the RECEIVED row). 409 otherwise.
     */
    @PostMapping("/{inboxId}/requeue")
    public ResponseEntity<?> requeue(@PathVariable String inboxId, Principal operator) {
        Long id = parseId(inboxId);
        if (id == null) {
            return ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("error", "no such inbox row"));
        }
        RequeueResult result = store.requeue(id, operator.getName());
        if (!result.found()) {
            return ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("error", "no such inbox row"));
        }
        if (!result.requeued()) {
            return ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of(
                    "error", "only DEAD or FAILED rows with a payload can be requeued", "status", result.fromStatus()));
        }
        log.info("Inbox {} requeued by operator {} (was {})", id, operator.getName(), result.fromStatus());
        publisher.publish(result.event());
        return get(inboxId);
    }

    static Long parseId(String inboxId) {
        try {
            long id = Long.parseLong(inboxId);
            return id > 0 ? id : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static boolean isStatus(String status) {
        for (InboxStatus s : InboxStatus.values()) {
            if (s.name().equals(status)) {
                return true;
            }
        }
        return false;
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
