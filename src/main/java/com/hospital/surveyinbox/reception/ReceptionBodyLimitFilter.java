package com.hospital.surveyinbox.reception;

import com.hospital.surveyinbox.config.AdapterProperties;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Caps the reception body on the stream, not on Content-Length: a chunked body has no length, and a
 * lying length must not matter either. The body is read into memory up to the cap (64 KiB by default)
 * and handed on; one byte more answers 413 without touching the route. Registered after Spring
 * Security, so an unauthenticated sender cannot make the service read anything.
 */
public class ReceptionBodyLimitFilter extends OncePerRequestFilter {

    private final AdapterProperties properties;
    private final ReceptionReplyWriter replyWriter;

    public ReceptionBodyLimitFilter(AdapterProperties properties, ReceptionReplyWriter replyWriter) {
        this.properties = properties;
        this.replyWriter = replyWriter;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        int limit = properties.getReception().getMaxBodyBytes();
        if (request.getContentLengthLong() > limit) {
            replyWriter.write(response, 413, "body larger than " + limit + " bytes");
            return;
        }
        byte[] body = readAtMost(request.getInputStream(), limit + 1);
        if (body.length > limit) {
            replyWriter.write(response, 413, "body larger than " + limit + " bytes");
            return;
        }
        chain.doFilter(new CachedBodyRequest(request, body), response);
    }

    private static byte[] readAtMost(InputStream in, int max) throws IOException {
        return in.readNBytes(max);
    }

    /** The request with its body already read and counted. */
    static final class CachedBodyRequest extends HttpServletRequestWrapper {

        private final byte[] body;

        CachedBodyRequest(HttpServletRequest request, byte[] body) {
            super(request);
            this.body = body;
        }

        @Override
        public int getContentLength() {
            return body.length;
        }

        @Override
        public long getContentLengthLong() {
            return body.length;
        }

        @Override
        public ServletInputStream getInputStream() {
            ByteArrayInputStream in = new ByteArrayInputStream(body);
            return new ServletInputStream() {
                @Override
                public boolean isFinished() {
                    return in.available() == 0;
                }

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setReadListener(ReadListener listener) {
                    throw new UnsupportedOperationException("synchronous reads only");
                }

                @Override
                public int read() {
                    return in.read();
                }

                @Override
                public int read(byte[] b, int off, int len) {
                    return in.read(b, off, len);
                }
            };
        }

        @Override
        public BufferedReader getReader() {
            return new BufferedReader(new InputStreamReader(getInputStream(), StandardCharsets.UTF_8));
        }
    }
}
