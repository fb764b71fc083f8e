package com.hospital.surveyinbox.reception;

import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.stereotype.Component;

/**
 * Writes the contract's {@code {"resultCode":"N","resultMessage":…}} answer straight to the servlet
 * response, for rejections decided before the route runs (401, 403, 413).
 */
@Component
public class ReceptionReplyWriter {

    private final ObjectMapper objectMapper;

    public ReceptionReplyWriter(ObjectMapper objectMapper) {
        this.objectMapper = objectMapper;
    }

    public void write(HttpServletResponse response, int status, String message) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("resultCode", "N");
        body.put("resultMessage", message);
        byte[] bytes = objectMapper.writeValueAsBytes(body);
        response.setStatus(status);
        response.setHeader("X-Result-Code", "N");
        response.setContentType("application/json");
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
        response.flushBuffer();
    }

    /**
     * The contract's "nothing stored, please retry" from a filter (the sender's rate limit, too many receptions under
     * way): 503 with Retry-After, timed among the reception's 503s as the route's answers are (the unavailable alert
     * and the SLO read them).
     */
    public void pleaseRetry(HttpServletResponse response, String message, ReceptionReplies replies) throws IOException {
        // timed before the answer leaves, as the route's answers are: a sender (or a test) that reads the metrics at
        // once after its 503 finds it counted
        replies.answeredAtOnce(503, "N");
        response.setHeader("Retry-After", "1");
        write(response, 503, message);
    }
}
