package com.hospital.surveyinbox.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * CSRF and authorization are decided on the path the application routes, not on its raw spelling: a forged
 * cross-site requeue is refused however the path is written (percent-encoded letters, encoded slash,
 * {@code ;} parameters, double or trailing slash, upper case, dot segments), and none reaches the
 * controller. Requests go over a raw socket, so nothing on the client side normalises the path.
 */
class OpsPathSpellingTest extends IntegrationTest {

    /** Every spelling of {@code /ops/inbox/{id}/requeue} an attacker might try. */
    static final List<Function<String, String>> SPELLINGS = List.of(
            id -> "/ops/inbox/" + id + "/requeue",
            id -> "/%6Fps/inbox/" + id + "/requeue",
            id -> "/o%70s/inbox/" + id + "/requeue",
            id -> "/%6f%70%73/inbox/" + id + "/requeue",
            id -> "/ops/%69nbox/" + id + "/requeue",
            id -> "/ops/inbox/" + id + "/r%65queue",
            id -> "/ops%2Finbox/" + id + "/requeue",
            id -> "/%2Fops/inbox/" + id + "/requeue",
            id -> "/ops;x=1/inbox/" + id + "/requeue",
            id -> "/ops/inbox;jsessionid=1/" + id + "/requeue",
            id -> "/ops/inbox/" + id + "/requeue;a=b",
            id -> "/ops/inbox/" + id + "/requeue%3Bx",
            id -> "//ops/inbox/" + id + "/requeue",
            id -> "/ops//inbox/" + id + "/requeue",
            id -> "/ops/inbox/" + id + "/requeue/",
            id -> "/OPS/inbox/" + id + "/requeue",
            id -> "/ops/INBOX/" + id + "/REQUEUE",
            id -> "/ops/./inbox/" + id + "/requeue",
            id -> "/ops/%2e/inbox/" + id + "/requeue",
            id -> "/ops/inbox/x/../" + id + "/requeue",
            id -> "/ops/inbox/x/%2e%2e/" + id + "/requeue",
            id -> "/legacy/../ops/inbox/" + id + "/requeue",
            id -> "/ops/inbox/" + id + "/requeue?x=1",
            id -> "/ops/inbox/" + id + "/requeue.json");

    static final Map<String, String> CROSS_SITE = Map.of("Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site",
            "Sec-Fetch-Mode", "navigate", "Content-Type", "application/x-www-form-urlencoded");

    @Test
    void aCrossSiteRequeueIsRefusedInEverySpellingAndNoneReachesTheController() {
        String id = failedRow();
        Object updatedAt = rows.row(id).get("updated_at");

        List<String> answers = new ArrayList<>();
        for (Function<String, String> spelling : SPELLINGS) {
            String path = spelling.apply(id);
            int status = post(path, CROSS_SITE);
            answers.add(status + " " + path);
            assertThat(status).as(path).isIn(400, 403, 404);
        }

        assertThat(answers).hasSizeGreaterThanOrEqualTo(12);
        assertThat(rows.status(id)).as(String.join("\n", answers)).isEqualTo("FAILED");
        assertThat(rows.row(id).get("updated_at")).isEqualTo(updatedAt);
        assertThat(audits(id)).isZero();
    }

    @Test
    void aFormPostFromABrowserThatSendsNoOriginIsRefusedToo() {
        String id = failedRow();
        for (String type : List.of("application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain")) {
            assertThat(post("/ops/inbox/" + id + "/requeue", Map.of("Content-Type", type))).as(type).isEqualTo(403);
        }
        assertThat(rows.status(id)).isEqualTo("FAILED");
        assertThat(audits(id)).isZero();
    }

    @Test
    void theConsolesOwnRequeueStillPasses() {
        String id = failedRow();
        String token = client.get("/ops/console", ServiceClient.OPS_AUTH).header("Set-Cookie").replaceAll(".*XSRF-TOKEN=([^;]+).*", "$1");

        int status = post("/ops/inbox/" + id + "/requeue", Map.of("Origin", "http://localhost:" + port,
                "Sec-Fetch-Site", "same-origin", "Cookie", "XSRF-TOKEN=" + token, "X-XSRF-TOKEN", token));

        assertThat(status).isEqualTo(200);
        assertThat(audits(id)).isOne();
    }

    /** A row in FAILED (a business error; the shared test context runs no redelivery job): requeueable. */
    private String failedRow() {
        String id = client.accept(ServiceClient.message(uniqueSubject("CSRF"), "").replace("F100", "UNREG-CSRF"));
        rows.awaitStatus(id, "FAILED");
        return id;
    }

    private long audits(String id) {
        return jdbc.queryForObject("SELECT count(*) FROM operator_audit WHERE inbox_id = ?", Long.class, Long.parseLong(id));
    }

    /** POSTs with the operator's Basic credentials (a browser that holds them) over a raw socket; the status. */
    private int post(String path, Map<String, String> headers) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            StringBuilder request = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: localhost:" + port + "\r\n")
                    .append("Authorization: ").append(ServiceClient.OPS_AUTH).append("\r\n")
                    .append("Content-Length: 0\r\nConnection: close\r\n");
            headers.forEach((name, value) -> request.append(name).append(": ").append(value).append("\r\n"));
            OutputStream out = socket.getOutputStream();
            out.write(request.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream statusLine = new ByteArrayOutputStream();
            for (int b = in.read(); b != -1 && b != '\n'; b = in.read()) {
                statusLine.write(b);
            }
            String line = statusLine.toString(StandardCharsets.ISO_8859_1);
            assertThat(line).as(path).startsWith("HTTP/1.1 ");
            return Integer.parseInt(line.substring(9, 12));
        } catch (IOException e) {
            throw new UncheckedIOException(path, e);
        }
    }
}
