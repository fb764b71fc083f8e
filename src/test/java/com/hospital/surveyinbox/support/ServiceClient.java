package com.hospital.surveyinbox.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/** A plain HTTP client for the service's public and management ports, as an outside caller sees them. */
public final class ServiceClient {

    public static final String LEGACY_AUTH = basic("legacy", "legacy-test-secret");
    public static final String OPS_AUTH = basic("ops", "ops-test-secret");
    /** adapter.security.ops-viewer: the operator API's reads only. */
    public static final String VIEWER_AUTH = basic("viewer", "viewer-test-secret");

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;
    private final String management;

    public ServiceClient(String base, String management) {
        this.base = base;
        this.management = management;
    }

    public record Reply(int status, Map<String, String> headers, String body) {
        public JsonNode json() {
            try {
                return MAPPER.readTree(body);
            } catch (IOException e) {
                throw new UncheckedIOException("not JSON: " + body, e);
            }
        }

        public String header(String name) {
            return headers.get(name.toLowerCase());
        }
    }

    public static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    public static String message(String srvyDrawupNo, String extraJsonFields) {
        return "{\"srvyDrawupNo\":\"" + srvyDrawupNo + "\",\"patno\":\"P" + Math.abs(srvyDrawupNo.hashCode())
                + "\",\"formCd\":\"F100\"" + (extraJsonFields == null || extraJsonFields.isEmpty() ? "" : "," + extraJsonFields) + "}";
    }

    /** A SEND (or, with extra fields, any message) for a subject and a patient number. */
    public static String message(String srvyDrawupNo, String patno, String extraJsonFields) {
        return "{\"srvyDrawupNo\":\"" + srvyDrawupNo + "\",\"patno\":\"" + patno + "\",\"formCd\":\"F100\""
                + (extraJsonFields == null || extraJsonFields.isEmpty() ? "" : "," + extraJsonFields) + "}";
    }

    /** POSTs a JSON body as the legacy sender. */
    public Reply receive(String json) {
        return post("/legacy/survey-send-info", json.getBytes(StandardCharsets.UTF_8), "application/json", LEGACY_AUTH, Map.of());
    }

    public Reply receive(String json, Map<String, String> headers) {
        return post("/legacy/survey-send-info", json.getBytes(StandardCharsets.UTF_8), "application/json", LEGACY_AUTH, headers);
    }

    /** The accepted inboxId; fails unless the answer is 200 Y. */
    public String accept(String json) {
        Reply reply = receive(json);
        if (reply.status() != 200 || !"Y".equals(reply.header("X-Result-Code"))) {
            throw new AssertionError("not accepted: " + reply.status() + " " + reply.body());
        }
        return reply.json().get("inboxId").asText();
    }

    public Reply post(String path, byte[] body, String contentType, String authorization, Map<String, String> headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        headers.forEach(request::header);
        return send(request.build());
    }

    /** The service's address of {@code path}, for a request built by hand. */
    public URI uri(String path) {
        return URI.create(base + path);
    }

    public Reply get(String path, String authorization) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30)).GET();
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        return send(request.build());
    }

    public Reply ops(String path) {
        return get(path, OPS_AUTH);
    }

    public Reply opsPost(String path) {
        return post(path, new byte[0], null, OPS_AUTH, Map.of());
    }

    public Reply management(String path) {
        return send(HttpRequest.newBuilder(URI.create(management + path)).timeout(Duration.ofSeconds(30)).GET().build());
    }

    /** A management-port GET with an Authorization header (e.g. {@link #OPS_AUTH} for health details). */
    public Reply management(String path, String authorization) {
        return send(HttpRequest.newBuilder(URI.create(management + path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", authorization).GET().build());
    }

    public Reply send(HttpRequest request) {
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            Map<String, String> headers = new LinkedHashMap<>();
            response.headers().map().forEach((k, v) -> headers.put(k.toLowerCase(), String.join(",", v)));
            return new Reply(response.statusCode(), headers, response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
