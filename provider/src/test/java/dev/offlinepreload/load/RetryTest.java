package dev.offlinepreload.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

class RetryTest {

    private final AtomicBoolean stop = new AtomicBoolean();
    private final Retry retry = new Retry(Duration.ofMillis(200), Duration.ofMillis(1), Duration.ofMillis(4), stop::get);

    @Test
    void pausesDoubleUpToTheMaximum() {
        Retry defaults = new Retry(Duration.ofMinutes(2), () -> false);
        assertThat(defaults.pause(1)).isEqualTo(Duration.ofMillis(500));
        assertThat(defaults.pause(2)).isEqualTo(Duration.ofSeconds(1));
        assertThat(defaults.pause(4)).isEqualTo(Duration.ofSeconds(4));
        assertThat(defaults.pause(7)).isEqualTo(Duration.ofSeconds(30));
        assertThat(defaults.pause(100)).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void returnsOnceTheActionSucceeds() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        String result = retry.call("test", () -> {
            if (calls.incrementAndGet() < 3) {
                throw new IllegalStateException("connection refused");
            }
            return "ok";
        });
        assertThat(result).isEqualTo("ok");
        assertThat(calls).hasValue(3);
    }

    @Test
    void givesUpAfterTheRetryTimeWithTheLastFailure() {
        AtomicInteger calls = new AtomicInteger();
        assertThatThrownBy(() -> retry.call("test", () -> {
            calls.incrementAndGet();
            throw new IllegalStateException("outer", new SQLException("connection refused"));
        })).isInstanceOf(Retry.GaveUp.class)
                .hasMessageContaining("outer").hasMessageContaining("caused by java.sql.SQLException: connection refused")
                .satisfies(e -> assertThat(((Retry.GaveUp) e).attempts()).isEqualTo(calls.get()).isGreaterThan(1));
    }

    @Test
    void stopsRetryingWhenToldTo() {
        AtomicInteger calls = new AtomicInteger();
        stop.set(true);
        assertThatThrownBy(() -> retry.call("test", () -> {
            calls.incrementAndGet();
            throw new IllegalStateException("down");
        })).isInstanceOf(Retry.GaveUp.class);
        assertThat(calls).hasValue(1);
    }
}
