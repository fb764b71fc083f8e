package com.hospital.surveyinbox.ops;

import com.hospital.surveyinbox.inbox.DatabaseFailures;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;

/**
 * The failure answers of the operator API's two controller reads ({@link InboxOpsController}: stats and history),
 * the same as its routes give ({@code routes/inbox-ops.camel.yaml}): a query parameter that is not a number is a
 * 400 naming it, a database that cannot be reached a 503, anything else a 500 logged by exception class only (never
 * its message, never Boot's generic error body).
 */
@RestControllerAdvice(assignableTypes = InboxOpsController.class)
public class OpsControllerAnswers {

    private static final Logger log = LoggerFactory.getLogger(OpsControllerAnswers.class);

    private final OpsReads reads;

    public OpsControllerAnswers(OpsReads reads) {
        this.reads = reads;
    }

    @ExceptionHandler(MethodArgumentTypeMismatchException.class)
    public ResponseEntity<Map<String, String>> notANumber(MethodArgumentTypeMismatchException e) {
        return ResponseEntity.badRequest().body(Map.of("error", e.getName() + " must be a whole number, 1.." + InboxOpsController.MAX_HISTORY_MINUTES));
    }

    @ExceptionHandler(Exception.class)
    public ResponseEntity<Map<String, String>> failed(Exception e) throws Exception {
        if (e instanceof org.springframework.web.ErrorResponse) {
            throw e; // Spring's own answers (406 for an Accept it cannot serve, ...): Spring gives them
        }
        if (DatabaseFailures.unavailable(e)) {
            return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(reads.unavailable());
        }
        log.error("Operator read failed ({})", e.getClass().getName());
        return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR).body(reads.failed());
    }
}
