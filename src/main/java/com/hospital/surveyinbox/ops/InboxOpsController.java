package com.hospital.surveyinbox.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.inbox.InboxEvent;
import com.hospital.surveyinbox.inbox.InboxEventPublisher;
import com.hospital.surveyinbox.inbox.InboxStatus;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.RequeueFilter;
import com.hospital.surveyinbox.inbox.RequeueResult;
import com.hospital.surveyinbox.processing.DownstreamCircuits;
import com.hospital.surveyinbox.processing.ProcessingWorkers;
import java.security.Principal;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Operator stats, history and requeue (CONTRACT §4). The list and one row's detail are routes
 * ({@code routes/inbox-ops.camel.yaml}, jpa:); the requeue stays here because it locks, updates and audits in
 * one transaction ({@code InboxStore}) and then republishes.
 */

@RestController
@RequestMapping("/ops/inbox")
public class InboxOpsController {

    private static final Logger log = LoggerFactory.getLogger(InboxOpsController.class);

    private final InboxRowRepository rows;
    private final InboxHistory history;
    private final InboxStore store;
    private final InboxEventPublisher publisher;
    private final PacedRepublisher paced;
    private final int bulkRequeueMax;
    private final DownstreamCircuits circuits;
    private final ProcessingWorkers workers;
    private final OpsReads reads;

    public InboxOpsController(InboxRowRepository rows, InboxHistory history, InboxStore store,
                              InboxEventPublisher publisher, PacedRepublisher paced,
                              AdapterProperties properties,
                              DownstreamCircuits circuits,
                              ProcessingWorkers workers,
                              OpsReads reads) {
        this.reads = reads;
        this.circuits = circuits;
        this.workers = workers;
        this.rows = rows;
        this.history = history;
        this.store = store;
        this.publisher = publisher;
        this.paced = paced;
        this.bulkRequeueMax = properties.getInbox().getBulkRequeueMax();
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
        return rows.findById(id).<ResponseEntity<?>>map(row -> ResponseEntity.ok(reads.detail(row)))
                .orElseGet(() -> ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("error", "no such inbox row")));
    }

    /**
     * A bulk requeue request: which rows ({@code status} DEAD or FAILED; optionally {@code lastErrorContains},
     * {@code srvyDrawupNoPrefix}, {@code receivedFrom}/{@code receivedTo} as ISO-8601 instants), whether to
     * only count them ({@code dryRun}, the default), and at most how many to take ({@code limit}).
     */
    public record BulkRequeue(String status, String lastErrorContains, String lastErrorCode, String srvyDrawupNoPrefix,
                              String receivedFrom, String receivedTo, Boolean dryRun, Integer limit) {

        /** The filters, each a non-blank text when given. */
        static final List<String> TEXT_FIELDS = List.of("status", "lastErrorContains", "lastErrorCode",
                "srvyDrawupNoPrefix", "receivedFrom", "receivedTo");
        static final java.util.Set<String> FIELDS = java.util.stream.Stream.concat(TEXT_FIELDS.stream(),
                java.util.stream.Stream.of("dryRun", "limit")).collect(java.util.stream.Collectors.toUnmodifiableSet());

        /** The request, or null when it names a field that is not one of {@link #FIELDS} or has a wrong type. */
        static BulkRequeue of(JsonNode json) {
            if (json == null || !json.isObject()) {
                return null;
            }
            for (java.util.Iterator<String> names = json.fieldNames(); names.hasNext(); ) {
                if (!FIELDS.contains(names.next())) {
                    return null; // a misspelt filter must never widen a bulk operation
                }
            }
            JsonNode dryRun = json.get("dryRun");
            JsonNode limit = json.get("limit");
            if ((dryRun != null && !dryRun.isBoolean()) || (limit != null && !limit.isIntegralNumber())) {
                return null;
            }
            for (String field : TEXT_FIELDS) {
                JsonNode value = json.get(field);
                // a filter given must be a text with something in it: "", "  ", {} or [] would filter nothing
                if (value != null && (!value.isTextual() || value.asText().isBlank())) {
                    return null;
                }
            }
            return new BulkRequeue(text(json, "status"), text(json, "lastErrorContains"), text(json, "lastErrorCode"), text(json, "srvyDrawupNoPrefix"),
                    text(json, "receivedFrom"), text(json, "receivedTo"), dryRun == null ? null : dryRun.asBoolean(),
                    limit == null ? null : limit.asInt());
        }

        private static String text(JsonNode json, String field) {
            JsonNode value = json.get(field);
            return value == null || value.isNull() ? null : value.asText();
        }
    }

    static final int FIRST_IDS = 20;
    static final int MAX_FILTER_TEXT = 200;

    /**
     * Requeues the DEAD or FAILED rows a filter matches, oldest first, at most {@code limit} per call
     * ({@code adapter.inbox.bulk-requeue-max}); each exactly as a single requeue (one transaction, audited
     * with the operator's name); their events are republished at {@code adapter.inbox.bulk-requeue-rate-per-second}.
     * A dry run ({@code "dryRun": true}, the default) changes nothing and answers how many rows match and the
     * first ids. 400 for a filter that is not one. The real call requeues at most {@code limit} rows, and no
     * more than this pod can republish before the redelivery job would take their events as lost
     * ({@link PacedRepublisher}); 409 (nothing changed) while earlier bulk requeues fill that room.
     * {@code remaining}: the rows that matched and this call did not requeue (another call or a worker may
     * have changed some meanwhile).
     */
    @PostMapping("/requeue")
    public ResponseEntity<?> requeueMany(@RequestBody JsonNode json,
                                         Principal operator) {
        BulkRequeue request = BulkRequeue.of(json);
        if (request == null) {
            return ResponseEntity.badRequest().body(Map.of("error", "a JSON object with only the fields " + new java.util.TreeSet<>(BulkRequeue.FIELDS)
                    + ": filters as non-blank texts (leave one out not to filter by it), dryRun a boolean, limit a whole number"));
        }
        if (request.status() == null
                || !(request.status().equals("DEAD") || request.status().equals("FAILED"))) {
            return ResponseEntity.badRequest().body(Map.of("error", "status must be DEAD or FAILED"));
        }
        int limit = request.limit() == null ? Math.min(100, bulkRequeueMax) : request.limit();
        if (limit < 1 || limit > bulkRequeueMax) {
            return ResponseEntity.badRequest().body(Map.of("error", "limit must be 1.." + bulkRequeueMax));
        }
        String lastError = blankToNull(request.lastErrorContains());
        String lastErrorCode = blankToNull(request.lastErrorCode());
        String prefix = blankToNull(request.srvyDrawupNoPrefix());
        if (java.util.stream.Stream.of(lastError, lastErrorCode, prefix).anyMatch(t -> t != null && t.length() > MAX_FILTER_TEXT)) {
            return ResponseEntity.badRequest().body(Map.of("error", "filter texts must be at most " + MAX_FILTER_TEXT + " characters"));
        }
        OffsetDateTime from;
        OffsetDateTime to;
        try {
            from = request.receivedFrom() == null ? null : OffsetDateTime.parse(request.receivedFrom());
            to = request.receivedTo() == null ? null : OffsetDateTime.parse(request.receivedTo());
        } catch (DateTimeParseException e) {
            return ResponseEntity.badRequest().body(Map.of("error", "receivedFrom and receivedTo must be ISO-8601 times with an offset"));
        }
        RequeueFilter filter = new RequeueFilter(
                InboxStatus.valueOf(request.status()), lastError, lastErrorCode, prefix, from, to);
        boolean dryRun = request.dryRun() == null || request.dryRun();
        RequeueFilter.Candidates candidates =
                store.requeueCandidates(filter, dryRun ? FIRST_IDS : limit);
        Map<String, Object> body = new LinkedHashMap<>();
        if (dryRun) {
            body.put("dryRun", true);
            body.put("matching", candidates.matching());
            body.put("firstIds", candidates.ids().stream().map(String::valueOf).toList());
            return ResponseEntity.ok(body);
        }
        // as many rows as this pod can republish before the redelivery job would take their events as lost
        int room = paced.reserve(candidates.ids().size());
        if (room == 0 && !candidates.ids().isEmpty()) {
            return ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("error",
                    "the events of earlier bulk requeues are still being republished on this pod; retry in a minute",
                    "pending", paced.pending()));
        }
        List<String> requeued = new java.util.ArrayList<>();
        List<InboxEvent> events = new java.util.ArrayList<>();
        try {
            for (long id : candidates.ids().subList(0, room)) {
                RequeueResult result = store.requeue(id, operator.getName());
                if (result.requeued()) { // a row another operator or a worker changed meanwhile is skipped
                    requeued.add(Long.toString(id));
                    events.add(result.event());
                }
            }
        } finally {
            paced.republish(events, room);
        }
        log.info("Bulk requeue by operator {}: {} rows requeued ({} matched {})", operator.getName(), requeued.size(),
                candidates.matching(), request.status());
        body.put("dryRun", false);
        body.put("requeued", requeued.size());
        body.put("ids", requeued);
        body.put("remaining", Math.max(0, candidates.matching() - requeued.size()));
        return ResponseEntity.ok(body);
    }

    static Long parseId(String inboxId) {
        try {
            long id = Long.parseLong(inboxId);
            return id > 0 ? id : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
