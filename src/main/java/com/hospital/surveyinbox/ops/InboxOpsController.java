package com.hospital.surveyinbox.ops;

import com.hospital.surveyinbox.inbox.InboxStatus;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.data.domain.PageRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Operator reads (CONTRACT §4). Served by Spring MVC rather than a route: these are queries over the
 * ledger, not part of the integration flow, and the route folder stays about moving messages.
 */
@RestController
@RequestMapping("/ops/inbox")
public class InboxOpsController {

    static final int DEFAULT_LIMIT = 50;
    static final int MAX_LIMIT = 500;

    private final InboxRowRepository rows;

    public InboxOpsController(InboxRowRepository rows) {
        this.rows = rows;
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
        return rows.findById(id).<ResponseEntity<?>>map(row -> ResponseEntity.ok(InboxRowView.of(row)))
                .orElseGet(() -> ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("error", "no such inbox row")));
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
